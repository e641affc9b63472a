"""A schema as a guide on the Chat Completions wire (cookbook:
models/openai/chat/structured_output, its guided_output_agent with strict_output=False)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from pydantic import BaseModel


class City(BaseModel):
    name: str
    country: str


strict_agent = Agent(
    model=OpenAIChat(id="gpt-4o"), description="You name cities.", output_schema=City
)
guided_output_agent = Agent(
    model=OpenAIChat(id="gpt-4o", strict_output=False),
    description="You name cities.",
    output_schema=City,
)

strict = strict_agent.run("The capital of Japan")
guided = guided_output_agent.run("The capital of France")
print(strict.content, guided.content)
