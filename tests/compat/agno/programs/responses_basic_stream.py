"""The Responses API, streamed: the run's content events as they arrive
(cookbook: models/openai/responses/basic_stream)."""

from collections.abc import Iterator

from ferrule.agent import Agent, RunOutputEvent
from ferrule.models.openai import OpenAIResponses

agent = Agent(model=OpenAIResponses(id="gpt-4o"), markdown=True)

chunks = []
run_response: Iterator[RunOutputEvent] = agent.run("Share a 2 sentence horror story", stream=True)
for chunk in run_response:
    if chunk.event == "RunContent" and chunk.content:
        chunks.append(chunk.content)
        print(chunk.content, end="", flush=True)
print()
