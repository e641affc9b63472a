"""Agno's run calls of the Agent beyond the run's input, with the scripted test model:
`print_response` with Agno's arguments (``stream_events`` among them, which used to fail
with ``got multiple values``; the run's own arguments; Markdown's tags), and background
runs (``arun(..., background=True)``: pending at once, found later in the db)."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.run import RunStatus
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel
from rich.console import Console


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=70, color_system=None), out


def test_print_response_streams_with_stream_events(rt):
    con, out = console()
    with Agent(rt, TestModel(["Streamed answer."])) as agent:
        agent.print_response("Hi", stream=True, stream_events=True, console=con)
    assert "Streamed answer." in out.getvalue()


def test_print_response_hands_the_run_its_own_arguments(rt, tmp_path):
    con, _out = console()
    seen = {}

    def hook(run_context, ticket):
        seen.update(state=dict(run_context.session_state), deps=run_context.dependencies)
        seen["ticket"] = ticket

    db = SqliteDb(db_file=str(tmp_path / "p.db"))
    with Agent(rt, TestModel(["Done."]), db=db, pre_hooks=[hook]) as agent:
        agent.print_response(
            "Hi",
            session_id="s-9",
            user_id="ann",
            session_state={"step": 2},
            dependencies={"plan": "gold"},
            run_id="r-9",
            ticket="T-1",
            console=con,
        )
        stored = agent.get_run_output("r-9")
    assert (stored.session_id, stored.user_id) == ("s-9", "ann")
    assert seen == {"state": {"step": 2}, "deps": {"plan": "gold"}, "ticket": "T-1"}


def test_print_response_markdown_follows_the_agent_and_shows_think_tags(rt):
    con, out = console()
    reply = "**bold** <think>aside</think>"
    with Agent(rt, TestModel([reply, reply]), markdown=True) as agent:
        agent.print_response("Hi", console=con)
        text = out.getvalue()
        assert "bold" in text and "**bold**" not in text  # rendered as Markdown
        assert "<think>aside</think>" in text  # shown, not read as HTML
        agent.print_response("Hi", markdown=False, console=con)
    assert "**bold**" in out.getvalue()


def test_a_background_run_is_pending_then_found_done(rt, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "bg.db"))

    async def main() -> None:
        async with Agent(rt, TestModel([{"text": "Later.", "delay": 0.2}]), db=db) as agent:
            started = await agent.arun("Work on it", background=True)
            assert started.status == RunStatus.pending
            stored = await agent.aget_run_output(started.run_id)
            assert stored is not None and stored.status == RunStatus.pending
            for _ in range(100):
                stored = await agent.aget_run_output(started.run_id)
                if stored.status == RunStatus.completed:
                    break
                await asyncio.sleep(0.05)
            assert stored.status == RunStatus.completed and stored.content == "Later."

    asyncio.run(main())


def test_background_events_go_on_without_a_reader(rt, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "bg2.db"))

    async def main() -> None:
        async with Agent(rt, TestModel(["One two three."]), db=db) as agent:
            events = agent.arun("Count", background=True, stream=True, stream_events=True)
            first = await anext(aiter(events))
            assert first.event == "RunStarted"  # then nothing more is read
            for _ in range(100):
                stored = await agent.aget_run_output(first.run_id)
                if stored is not None and stored.status == RunStatus.completed:
                    break
                await asyncio.sleep(0.05)
            assert stored.content == "One two three."

    asyncio.run(main())


def test_a_background_run_needs_a_db(rt):
    with Agent(rt, TestModel()) as agent:
        with pytest.raises(InvalidInputError) as refused:
            agent.arun("x", background=True)
    assert refused.value.errors[0]["path"] == "db"
