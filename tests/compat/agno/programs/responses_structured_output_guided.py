"""A schema as a guide, not strict (cookbook: models/openai/responses/structured_output,
its guided_output_agent with strict_output=False)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses
from pydantic import BaseModel


class City(BaseModel):
    name: str
    country: str


guided_output_agent = Agent(
    model=OpenAIResponses(id="gpt-4o", strict_output=False),
    description="You name cities.",
    output_schema=City,
)

response = guided_output_agent.run("The capital of Japan")
print(response.content)
