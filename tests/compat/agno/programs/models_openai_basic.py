"""An agent on OpenAI's Chat Completions, asked once (cookbook: models/openai/chat/basic)."""

from ferrule.agent import Agent, RunOutput
from ferrule.models.openai import OpenAIChat

agent = Agent(model=OpenAIChat(id="gpt-4o"), markdown=True)

# Get the response in a variable
run: RunOutput = agent.run("Share a 2 sentence horror story")
print(run.content)
