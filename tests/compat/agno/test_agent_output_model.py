"""Agno's ``Agent(output_model=..., output_model_prompt=...)`` on ferrule's turn loop: a
second model writes the run's output from the conversation (the main model's reply left
out, the prompt as system message), its text streamed as the content between
`OutputModelResponseStartedEvent` and `OutputModelResponseCompletedEvent` while the main
model's streams as `IntermediateRunContentEvent`. OpenAI's wire on the loopback server
(`wire`: conftest)."""

from __future__ import annotations

import json
from typing import Any

import attrs
from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import (
    RUN_EVENT_TYPE_REGISTRY,
    IntermediateRunContentEvent,
    OutputModelResponseCompletedEvent,
    OutputModelResponseStartedEvent,
    RunContentEvent,
    RunEvent,
)
from ferrule.tools import tool


def texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content)
    return content or ""


def test_the_output_model_writes_the_content(wire):
    wire.says("Paris, on the Seine.", "The capital of France is Paris.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        instructions="Answer briefly.",
        output_model=OpenAIChat(id="gpt-4o-mini"),
        output_model_prompt="Rewrite the answer as one full sentence.",
    )
    output = agent.run("What is the capital of France?")
    agent.delete()
    assert output.content == "The capital of France is Paris."
    main, written = wire.bodies
    assert (main["model"], written["model"]) == ("gpt-4o", "gpt-4o-mini")
    roles = [m["role"] for m in written["messages"]]
    assert roles == ["system", "user"]  # the main model's reply is left out
    assert texts(written["messages"][0]) == "Rewrite the answer as one full sentence."
    assert texts(written["messages"][1]) == "What is the capital of France?"
    assert "tools" not in written
    # the run's messages keep the main model's reply, as Agno's do
    assert output.messages[-1].content == "Paris, on the Seine."


def test_without_a_prompt_the_output_model_reads_the_agents_system_message(wire):
    wire.says("draft", "final")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        instructions="Answer briefly.",
        output_model=OpenAIChat(id="gpt-4o-mini"),
    )
    assert agent.run("Hi").content == "final"
    agent.delete()
    main, written = wire.bodies
    assert written["messages"][0] == main["messages"][0]
    assert "Answer briefly." in texts(written["messages"][0])


def test_the_output_model_reads_the_tool_calls_and_results(wire):
    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    wire.calls("get_weather", city="Paris")
    wire.says("sunny", "It is sunny in Paris today.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        tools=[get_weather],
        output_model=OpenAIChat(id="gpt-4o-mini"),
    )
    assert agent.run("Weather in Paris?").content == "It is sunny in Paris today."
    agent.delete()
    written = wire.bodies[-1]
    assert [m["role"] for m in written["messages"]] == ["user", "assistant", "tool"]
    assert "Sunny in Paris" in texts(written["messages"][-1])


@attrs.define
class City:
    name: str
    country: str


def test_the_output_model_is_sent_the_output_schema(wire):
    wire.says("Lisbon is in Portugal.", json.dumps({"name": "Lisbon", "country": "Portugal"}))
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        output_schema=City,
        output_model=OpenAIChat(id="gpt-4o-mini"),
    )
    assert agent.run("A city?").content == City("Lisbon", "Portugal")
    agent.delete()
    main, written = wire.bodies
    assert main["response_format"]["type"] == written["response_format"]["type"] == "json_schema"


def test_the_output_model_streams_the_content_between_its_events(wire):
    wire.says("draft answer", "final answer")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), output_model=OpenAIChat(id="gpt-4o-mini"))
    events = list(agent.run("Hi", stream=True, stream_events=True))
    agent.delete()
    kinds = [e.event for e in events]
    started = kinds.index("OutputModelResponseStarted")
    completed = kinds.index("OutputModelResponseCompleted")
    assert started < completed < kinds.index("RunContentCompleted")
    content = "".join(e.content for e in events[started:completed] if e.event == "RunContent")
    assert content == "final answer"
    assert all(e.event != "RunContent" for e in events[:started])
    intermediate = [e for e in events if isinstance(e, IntermediateRunContentEvent)]
    assert "".join(e.content for e in intermediate) == "draft answer"
    assert events[-1].event == "RunCompleted" and events[-1].content == "final answer"
    ends = [e for e in events if isinstance(e, OutputModelResponseCompletedEvent)]
    assert ends[0].run_id == events[-1].run_id and ends[0].agent_id == agent.id


def test_without_stream_events_only_the_output_models_content_streams(wire):
    wire.says("draft answer", "final answer")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), output_model=OpenAIChat(id="gpt-4o-mini"))
    chunks = list(agent.run("Hi", stream=True))
    agent.delete()
    assert all(isinstance(c, RunContentEvent) for c in chunks)
    assert "".join(c.content for c in chunks) == "final answer"


def test_the_output_model_events_are_agnos():
    assert RunEvent.output_model_response_started.value == "OutputModelResponseStarted"
    started = OutputModelResponseStartedEvent(run_id="r", agent_id="a")
    assert RUN_EVENT_TYPE_REGISTRY["OutputModelResponseStarted"] is OutputModelResponseStartedEvent
    again = OutputModelResponseStartedEvent.from_dict(started.to_dict())
    assert again.run_id == "r" and again.event == "OutputModelResponseStarted"
    assert OutputModelResponseCompletedEvent.event == "OutputModelResponseCompleted"


def test_an_output_model_may_be_named_provider_colon_model(wire):
    wire.says("draft", "final")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), output_model="openai:gpt-4o-mini")
    assert agent.run("Hi").content == "final"
    agent.delete()
    assert [b["model"] for b in wire.bodies] == ["gpt-4o", "gpt-4o-mini"]
