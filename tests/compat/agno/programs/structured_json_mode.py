"""Structured output through the provider's JSON mode (cookbook: structured output, json mode)."""

from ferrule.agent import Agent, RunOutput
from ferrule.models.openai import OpenAIChat
from pydantic import BaseModel, Field


class MovieScript(BaseModel):
    setting: str = Field(..., description="Provide a nice setting for a blockbuster movie.")
    genre: str = Field(..., description="Genre of the movie.")
    characters: list[str] = Field(..., description="Name of characters for this movie.")


json_mode_agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    description="You write movie scripts.",
    output_schema=MovieScript,
    use_json_mode=True,
)

json_mode_response: RunOutput = json_mode_agent.run("New York")
print(json_mode_response.content)
