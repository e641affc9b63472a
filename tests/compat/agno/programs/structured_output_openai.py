"""A typed reply with output_schema (cookbook: models/openai/chat/structured_output)."""

from ferrule.agent import Agent, RunOutput
from ferrule.models.openai import OpenAIChat
from pydantic import BaseModel, Field


class MovieScript(BaseModel):
    setting: str = Field(..., description="The setting of the movie.")
    ending: str = Field(..., description="The ending of the movie.")
    genre: str = Field(..., description="The genre of the movie.")
    name: str = Field(..., description="The name of the movie.")
    characters: list[str] = Field(..., description="The characters of the movie.")


structured_output_agent = Agent(
    model=OpenAIChat(id="gpt-4o", temperature=0.4),
    description="You write movie scripts.",
    output_schema=MovieScript,
)

run: RunOutput = structured_output_agent.run("New York")
script: MovieScript = run.content
print(script.name)
