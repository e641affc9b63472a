"""A response that fails mid-stream: the run raises the provider's error, typed, and the
agent answers the next question (Agno's ModelProviderError)."""

from ferrule.agent import Agent
from ferrule.exceptions import ModelProviderError
from ferrule.models.openai import OpenAIResponses

agent = Agent(model=OpenAIResponses(id="gpt-4o", max_retries=0))

error = None
try:
    agent.run("Tell me a joke")
except ModelProviderError as e:
    error = e
    print("The run failed:", e)

recovered = agent.run("Tell me a joke")
print(recovered.content)
