"""The Responses API from asyncio (cookbook: models/openai/responses/async_basic)."""

import asyncio

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

agent = Agent(model=OpenAIResponses(id="gpt-4o"), markdown=True)


async def main():
    return await agent.arun("Share a 2 sentence horror story")


run = asyncio.run(main())
print(run.content)
