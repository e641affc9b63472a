"""A response that fails mid-stream: the run ends with RunStatus.error (Agno's way), its
content the provider's message and its typed error (Agno's ModelProviderError) kept in
``error``; the agent answers the next question."""

from ferrule.agent import Agent
from ferrule.exceptions import ModelProviderError
from ferrule.models.openai import OpenAIResponses
from ferrule.run.agent import RunStatus

agent = Agent(model=OpenAIResponses(id="gpt-4o", max_retries=0))

run = agent.run("Tell me a joke")
error = None
if run.status == RunStatus.error:
    print("The run failed:", run.content)
    error = run.error if isinstance(run.error, ModelProviderError) else None

recovered = agent.run("Tell me a joke")
print(recovered.content)
