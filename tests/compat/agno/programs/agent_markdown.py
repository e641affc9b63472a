"""An agent asked to answer in markdown (cookbook: basic agent, markdown=True)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat

agent = Agent(model=OpenAIChat(id="gpt-4o"), markdown=True)
run = agent.run("List three fruits")
print(run.content)
