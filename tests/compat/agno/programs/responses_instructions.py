"""Description and instructions of an agent on the Responses API (they become the
request's instructions; cookbook: agents' instructions on models/openai/responses)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

agent = Agent(
    model=OpenAIResponses(id="gpt-4o"),
    description="You are a famous short story writer asked to write for a magazine.",
    instructions=["Always answer in exactly one sentence.", "Never use the word 'very'."],
)
run = agent.run("Write a story about a lighthouse keeper.")
print(run.content)
