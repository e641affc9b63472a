"""Tool calls of a streamed Responses run, as events
(cookbook: models/openai/responses/tool_use_stream)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses
from ferrule.run.agent import RunEvent


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


agent = Agent(model=OpenAIResponses(id="gpt-4o"), tools=[add])

started, completed, content = [], [], []
for event in agent.run("What is 17 + 25?", stream=True, stream_events=True):
    if event.event == RunEvent.tool_call_started:
        started.append(event.tool.tool_name)
    elif event.event == RunEvent.tool_call_completed:
        completed.append(event.tool.result)
    elif event.event == RunEvent.run_content and event.content:
        content.append(event.content)
print("".join(content))
