"""A provider's error reaches the caller as Agno's ModelProviderError."""

from ferrule.agent import Agent
from ferrule.exceptions import ModelProviderError
from ferrule.models.openai import OpenAIChat

agent = Agent(model=OpenAIChat(id="gpt-4o", max_retries=0))

caught = None
try:
    run = agent.run("Hello?")
    if run.error is not None:
        raise run.error
except ModelProviderError as error:
    caught = error
    print("the provider said:", error)
