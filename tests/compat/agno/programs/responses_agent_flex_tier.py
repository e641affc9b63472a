"""The flex service tier (cookbook: models/openai/responses/agent_flex_tier)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

agent = Agent(
    model=OpenAIResponses(id="o4-mini", service_tier="flex"),
    markdown=True,
)
run = agent.run("Share a 2 sentence horror story")
print(run.content)
