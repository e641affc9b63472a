"""An agent on OpenAI's Responses API, asked once (cookbook: models/openai/responses/basic)."""

from ferrule.agent import Agent, RunOutput
from ferrule.models.openai import OpenAIResponses

agent = Agent(model=OpenAIResponses(id="gpt-4o"), markdown=True)

# Get the response in a variable
run: RunOutput = agent.run("Share a 2 sentence horror story")
print(run.content)
