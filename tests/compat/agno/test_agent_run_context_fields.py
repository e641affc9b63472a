"""What Agno's ``RunContext`` holds during a run on ferrule: the run's ``output_schema``,
its ``messages`` so far (Agno `Message`s), its resolved ``tools``, the agent's
``knowledge``, its ``session_state``; and the caller's ``client_tools``, which are the
run's tools too. The model is OpenAI's wire on the loopback server (`wire`: conftest)."""

from __future__ import annotations

import json
from typing import Any

import attrs
from ferrule.agent import Agent
from ferrule.knowledge import Knowledge
from ferrule.models.message import Message as AgnoMessage
from ferrule.models.openai import OpenAIChat
from ferrule.run.base import RunContext


@attrs.define
class Answer:
    city: str
    seen: int


def test_a_tool_sees_the_runs_schema_messages_tools_and_knowledge(wire):
    seen: dict[str, Any] = {}

    def inspect_run(run_context: RunContext) -> str:
        """Look at the run."""
        seen["schema"] = run_context.output_schema
        seen["messages"] = [(m.role, m.content) for m in run_context.messages or ()]
        seen["types"] = {type(m) for m in run_context.messages or ()}
        seen["tools"] = sorted(t.name for t in run_context.tools or ())
        seen["knowledge"] = run_context.knowledge
        seen["state"] = run_context.session_state
        return "looked"

    knowledge = Knowledge()
    wire.calls("inspect_run")
    wire.says(json.dumps({"city": "Oslo", "seen": 2}))
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        tools=[inspect_run],
        output_schema=Answer,
        knowledge=knowledge,
        search_knowledge=False,
        session_state={"visits": 1},
    )
    output = agent.run("Where am I?")
    agent.delete()
    assert output.content == Answer(city="Oslo", seen=2)
    assert seen["schema"] is Answer
    assert seen["types"] == {AgnoMessage}
    roles = [role for role, _ in seen["messages"]]
    assert roles[-2:] == ["user", "assistant"]  # the call being made is the last message
    assert ("user", "Where am I?") in seen["messages"]
    assert seen["tools"] == ["inspect_run"]
    assert seen["knowledge"] is knowledge
    assert seen["state"] == {"visits": 1}


def test_client_tools_are_the_runs_tools_after_the_agents(wire):
    def local_time(city: str) -> str:
        """The local time in a city."""
        return f"12:00 in {city}"

    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    context = RunContext(run_id="r1", session_id="s1", client_tools=[local_time])
    assert context.session_state is None  # Agno's default: the run fills it
    wire.calls("local_time", city="Oslo")
    wire.says("It is noon.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[weather])
    output = agent.run("Time in Oslo?", run_context=context)
    agent.delete()
    assert output.content == "It is noon."
    first = wire.bodies[0]
    assert [t["function"]["name"] for t in first["tools"]] == ["weather", "local_time"]
    results = [m["content"] for m in wire.last["messages"] if m["role"] == "tool"]
    assert results == ["12:00 in Oslo"]
    assert sorted(t.name for t in context.tools or ()) == ["local_time", "weather"]
    assert context.session_state == {}


def test_a_run_without_client_tools_keeps_the_agents_only(wire):
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    wire.says("Fine.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[weather])
    agent.run("Hi", run_context=RunContext(run_id="r2", session_id="s2"))
    agent.delete()
    assert [t["function"]["name"] for t in wire.bodies[0]["tools"]] == ["weather"]
