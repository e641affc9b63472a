"""Agno's ``CustomEvent`` on ferrule: a generator tool's yielded events are streamed as
the run's, named after it and its call, between the call's `ToolCallStartedEvent` and
`ToolCallCompletedEvent`, with or without ``stream_events``; what the tool yielded, as
text, is the result the model reads. The model is OpenAI's wire on the loopback server
(`wire`: conftest)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import CustomEvent, RunEvent, run_output_event_from_dict


@dataclass
class ProfileEvent(CustomEvent):
    """A customer's profile, as a tool found it."""

    customer_name: str | None = None
    customer_email: str | None = None


def profile(name: str) -> Iterator[object]:
    """Look a customer up."""
    yield ProfileEvent(customer_name=name, customer_email=f"{name.lower()}@example.com")
    yield f"{name} is a customer since 2020."


async def progress(steps: int) -> AsyncIterator[object]:
    """Work through some steps."""
    for step in range(1, steps + 1):
        yield CustomEvent(step=step, of=steps)
    yield "done"


def tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_generator_tools_events_stream_between_its_call_events(wire):
    wire.calls_many(("profile", {"name": "Ada"}))
    wire.says("Ada is a customer.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), name="Support", tools=[profile])
    events = list(agent.run("Who is Ada?", stream=True, stream_events=True))
    agent.delete()
    kinds = [e.event for e in events if e.event != "RunContent"]
    at = kinds.index("CustomEvent")
    assert kinds[at - 1 : at + 2] == ["ToolCallStarted", "CustomEvent", "ToolCallCompleted"]
    (custom,) = [e for e in events if isinstance(e, CustomEvent)]
    assert isinstance(custom, ProfileEvent) and custom.event == RunEvent.custom_event
    assert (custom.customer_name, custom.customer_email) == ("Ada", "ada@example.com")
    started = next(e for e in events if e.event == "ToolCallStarted")
    assert custom.tool_call_id == started.tool.tool_call_id
    assert (custom.run_id, custom.agent_id, custom.agent_name) == (
        events[-1].run_id,
        agent.id,
        "Support",
    )
    # the model reads what the tool yielded, each item as text
    (result,) = tool_results(wire.last)
    assert result == str(custom) + "Ada is a customer since 2020."
    data = custom.to_dict()
    assert data["customer_name"] == "Ada" and data["event"] == "CustomEvent"
    assert json.loads(custom.to_json())["tool_call_id"] == custom.tool_call_id
    back = run_output_event_from_dict(data)
    assert isinstance(back, CustomEvent) and back.customer_name == "Ada"  # type: ignore[attr-defined]


def test_an_async_generator_tools_events_come_without_stream_events(wire):
    wire.calls("progress", steps=2)
    wire.says("Finished.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[progress])
    events = list(agent.run("Go", stream=True))
    agent.delete()
    customs = [e for e in events if isinstance(e, CustomEvent)]
    assert [(e.step, e.of) for e in customs] == [(1, 2), (2, 2)]  # type: ignore[attr-defined]
    assert "ToolCallStarted" not in {e.event for e in events}  # no steps without stream_events
    (result,) = tool_results(wire.last)
    assert result.endswith("done") and result.count("CustomEvent(") == 2


def test_a_run_not_streamed_gives_the_model_the_yielded_text(wire):
    wire.calls_many(("profile", {"name": "Bo"}))
    wire.says("Bo is a customer.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[profile])
    output = agent.run("Who is Bo?")
    agent.delete()
    assert output.content == "Bo is a customer."
    assert output.tools is not None
    assert output.tools[0].result.endswith("Bo is a customer since 2020.")
    assert tool_results(wire.last)[0].endswith("Bo is a customer since 2020.")
