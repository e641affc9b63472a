"""xAI's Grok with sampling parameters (cookbook: models/xai/basic)."""

from ferrule.agent import Agent
from ferrule.models.xai import xAI

agent = Agent(model=xAI(id="grok-4", temperature=0.1, seed=1234), markdown=True)
run = agent.run("Share a 2 sentence horror story")
print(run.content)
