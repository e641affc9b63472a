"""Generator tools, sync and async, whose parameter is a pydantic model: each gets the
model (not a dict) and streams the events it yields (cookbook:
tools/async_generator_tool_with_pydantic_args)."""

import asyncio
from dataclasses import dataclass
from typing import Literal

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import CustomEvent
from ferrule.tools import Toolkit
from pydantic import BaseModel, Field


class Query(BaseModel):
    text: str
    period: Literal["day", "week", "any"] = "any"
    limit: int = Field(default=5, ge=1, le=20)


@dataclass
class Progress(CustomEvent):
    tool_name: str | None = None
    got: str | None = None
    stage: str | None = None


class Finder(Toolkit):
    def __init__(self):
        super().__init__(name="finder", tools=[self.find, self.afind, self.afind_once])

    def find(self, query: Query):
        """Find, reporting progress.

        Args:
            query: What to find.
        """
        yield Progress(tool_name="find", got=type(query).__name__, stage="start")
        yield {"found": [query.text] * query.limit}

    async def afind(self, query: Query):
        """Find asynchronously, reporting progress.

        Args:
            query: What to find.
        """
        yield Progress(tool_name="afind", got=type(query).__name__, stage="start")
        await asyncio.sleep(0)
        yield Progress(tool_name="afind", got=query.period, stage="done")
        yield {"found": [query.text.upper()] * query.limit}

    async def afind_once(self, query: Query) -> dict:
        """Find asynchronously, at once.

        Args:
            query: What to find.
        """
        await asyncio.sleep(0)
        return {"found": query.text, "limit": query.limit}


agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[Finder()])
progress = []


async def main():
    async for event in agent.arun("Find 'ml' with every tool.", stream=True):
        if isinstance(event, Progress):
            progress.append((event.tool_name, event.got, event.stage, event.tool_call_id))


asyncio.run(main())
