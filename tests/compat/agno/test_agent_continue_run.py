"""Agno's ``continue_run`` / ``acontinue_run`` forms on ferrule's paused runs (the scripted
test model calls tools that wait, a real SQLite store where one is needed): the paused
`RunOutput` given back whole, ``run_id=`` with Agno's ``updated_tools``, the session and
user a run must be of, the ``dependencies`` (functions among them called),
``knowledge_filters`` and ``metadata`` the rest of the run sees, ``debug_mode`` and other
keywords for the hooks, and ``yield_run_output`` ending a stream."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.agent.run_errors import UnknownRunError
from ferrule.db.sqlite import SqliteDb
from ferrule.models.response import ToolExecution
from ferrule.run.agent import RunOutput
from ferrule.tools import tool
from ferrule.tools.tool_context import RunContext
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


SEEN: list[dict[str, Any]] = []


@tool(requires_confirmation=True)
def ship(box: str, run_context: RunContext) -> str:
    """Ship a box."""
    SEEN.append(
        {
            "dependencies": dict(run_context.dependencies or {}),
            "filters": run_context.knowledge_filters,
            "metadata": dict(run_context.metadata or {}),
        }
    )
    city = (run_context.dependencies or {}).get("city", "nowhere")
    return f"shipped {box} to {city}"


def shipping_model() -> TestModel:
    return TestModel([{"tool_calls": [{"name": "ship", "arguments": {"box": "b1"}}]}, "Done."])


def tool_results(agent: Agent) -> list[str]:
    """The tool results the agent's test model was sent, in order."""
    requests = agent.runtime.kernel.component(agent._component).requests
    return [m.text for m in requests[-1].messages if m.role == "tool"]


def test_the_paused_run_output_given_back_whole(rt):
    with Agent(rt, shipping_model(), tools=[ship]) as agent:
        paused = agent.run("Ship it")
        for requirement in paused.requirements:
            requirement.confirm()
        done = agent.continue_run(paused)
        assert tool_results(agent) == ["shipped b1 to nowhere"]
    assert done.content == "Done."


def test_run_id_with_agnos_updated_tools(rt):
    with Agent(rt, shipping_model(), tools=[ship]) as agent:
        paused = agent.run("Ship it")
        call_id = paused.requirements[0].tool_call.id
        refused = ToolExecution(
            tool_call_id=call_id, tool_name="ship", confirmed=False, confirmation_note="not today"
        )
        done = agent.continue_run(run_id=paused.run_id, updated_tools=[refused])
        (result,) = tool_results(agent)
    assert done.content == "Done."
    assert "not today" in result and "shipped" not in result


def test_a_run_of_another_session_or_user_is_not_found(rt):
    with Agent(rt, shipping_model(), tools=[ship], session_id="s1", user_id="ann") as agent:
        paused = agent.run("Ship it")
        with pytest.raises(UnknownRunError):
            agent.continue_run(run_id=paused.run_id, session_id="s2", confirm=True)
        with pytest.raises(UnknownRunError):
            agent.continue_run(run_id=paused.run_id, user_id="bo", confirm=True)
        with pytest.raises(InvalidInputError) as caught:
            agent.continue_run(confirm=True)
        assert caught.value.errors[0]["path"] == "run_id"
        done = agent.continue_run(paused.run_id, session_id="s1", user_id="ann", confirm=True)
    assert done.content == "Done."


def test_the_rest_of_the_run_takes_the_continuations_context(rt):
    SEEN.clear()
    with Agent(
        rt, shipping_model(), tools=[ship], dependencies={"city": "Paris", "crate": "wood"}
    ) as agent:
        paused = agent.run("Ship it", metadata={"order": 1})
        done = agent.continue_run(
            paused,
            confirm=True,
            dependencies={"city": lambda: "Lyon"},
            knowledge_filters={"region": "south"},
            metadata={"order": 2},
        )
        assert tool_results(agent) == ["shipped b1 to Lyon"]
    assert done.content == "Done."
    (seen,) = SEEN
    assert seen["dependencies"] == {"city": "Lyon", "crate": "wood"}
    assert seen["filters"] == {"region": "south"}
    assert seen["metadata"]["order"] == 2


def test_a_run_context_given_to_the_continuation(rt):
    SEEN.clear()
    with Agent(rt, shipping_model(), tools=[ship]) as agent:
        paused = agent.run("Ship it")
        context = RunContext(
            run_id=paused.run_id, session_id="", dependencies={"city": "Oslo"}, metadata={"k": 1}
        )
        agent.continue_run(paused, confirm=True, run_context=context)
        assert tool_results(agent) == ["shipped b1 to Oslo"]
    assert SEEN[0]["metadata"]["k"] == 1


def test_debug_mode_and_other_keywords_reach_the_hooks(rt):
    heard: list[tuple[Any, Any]] = []

    def audit(run_output: Any, debug_mode: bool, ticket: str | None = None) -> None:
        heard.append((debug_mode, ticket))

    with Agent(rt, shipping_model(), tools=[ship], post_hooks=[audit]) as agent:
        paused = agent.run("Ship it")
        agent.continue_run(paused, confirm=True, debug_mode=True, ticket="T-7")
    assert heard == [(True, "T-7")]


def test_a_stream_ends_with_the_run_output_when_asked(rt):
    with Agent(rt, shipping_model(), tools=[ship]) as agent:
        paused = agent.run("Ship it")
        items = list(agent.continue_run(paused, confirm=True, stream=True, yield_run_output=True))
    assert isinstance(items[-1], RunOutput) and items[-1].content == "Done."
    assert not any(isinstance(i, RunOutput) for i in items[:-1])


def test_the_async_twin_with_a_run_stored_in_another_agent(rt, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))

    async def main() -> Any:
        async with Agent(rt, shipping_model(), tools=[ship], db=db, id="shipper") as first:
            paused = await first.arun("Ship it", session_id="s9", user_id="ann")
        async with Agent(rt, TestModel(["Done."]), tools=[ship], db=db, id="shipper") as again:
            return await again.acontinue_run(
                run_id=paused.run_id, session_id="s9", user_id="ann", confirm=True
            )

    done = asyncio.run(main())
    assert done.content == "Done."


def test_acancel_run_stops_a_run_awaited_elsewhere(rt):
    slow = TestModel([{"text": "one two three four five six", "delay": 0.2}])

    async def main() -> tuple[bool, bool, Any]:
        async with Agent(rt, slow) as agent:
            stream = agent.arun("go", stream=True, stream_events=True)
            events: list[Any] = []

            async def read() -> None:
                async for event in stream:
                    events.append(event)

            reader = asyncio.ensure_future(read())
            await asyncio.sleep(0.5)
            stopped = await Agent.acancel_run(stream.run_id)
            await reader
            again = await Agent.acancel_run(stream.run_id)  # no longer running
            return stopped, again, stream.output.status

    stopped, again, status = asyncio.run(main())
    assert stopped is True and again is False and status == "cancelled"
