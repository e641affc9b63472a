"""How long GPT-5 answers (cookbook: models/openai/responses/verbosity_control)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

agent = Agent(
    model=OpenAIResponses(id="gpt-5", verbosity="high"),
    markdown=True,
)
run = agent.run("Write a poem about the sea.")
print(run.content)
