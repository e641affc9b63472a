"""Gemini, streamed, with its generation parameters (cookbook: models/google/gemini/basic_stream)."""

from ferrule.agent import Agent
from ferrule.models.google import Gemini
from ferrule.run.agent import RunOutputEvent

agent = Agent(
    model=Gemini(id="gemini-2.5-flash", temperature=0.7, max_output_tokens=200, top_p=0.95),
    markdown=True,
)

pieces = []
stream = agent.run("Share a 2 sentence horror story", stream=True)
chunk: RunOutputEvent
for chunk in stream:
    if chunk.content:
        pieces.append(chunk.content)
        print(chunk.content, end="")
print()
