"""Structured output on the Responses API: the reply parsed into a pydantic model
(cookbook: models/openai/responses/structured_output)."""

from ferrule.agent import Agent, RunOutput
from ferrule.models.openai import OpenAIResponses
from pydantic import BaseModel, Field


class MovieScript(BaseModel):
    setting: str = Field(..., description="Provide a nice setting for a blockbuster movie.")
    genre: str = Field(..., description="Genre of the movie.")
    name: str = Field(..., description="Give a name to this movie")
    characters: list[str] = Field(..., description="Name of characters for this movie.")


structured_output_agent = Agent(
    model=OpenAIResponses(id="gpt-4o"),
    description="You write movie scripts.",
    output_schema=MovieScript,
)

response: RunOutput = structured_output_agent.run("New York")
print(response.content)
