"""A streamed run's events, told apart by RunEvent (cookbook: agents/events/basic_agent_events)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import RunEvent

seen = []
content = []


def get_top_story() -> str:
    """The top story of the day."""
    return "Ferrule runs Agno programs."


agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[get_top_story])

for chunk in agent.run("What is today's top story?", stream=True, stream_events=True):
    seen.append(chunk.event)
    if chunk.event == RunEvent.run_started:
        print("run started")
    elif chunk.event == RunEvent.tool_call_started:
        print(f"calling {chunk.tool.tool_name if hasattr(chunk.tool, 'tool_name') else chunk.tool}")
    elif chunk.event == RunEvent.tool_call_completed:
        print("tool result:", chunk.tool.result)
    elif chunk.event == RunEvent.run_content:
        content.append(chunk.content or "")
    elif chunk.event == RunEvent.run_completed:
        print("\nrun completed")
