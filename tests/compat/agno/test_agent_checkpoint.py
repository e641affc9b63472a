"""Agno 2.9's ``Agent(checkpoint=...)``: with ``"tool-batch"`` a run is written to the db
as ``running`` after each batch of tool calls (seen from a tool of the next batch, on a
real SQLite store), so that a run cut short can be taken up again; ``"runs"`` (the
default) writes it at its end only; ``"tools"`` (Agno 3.0's) and other values are refused
naming the option."""

from __future__ import annotations

from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.tools import tool
from ferrule.tools.tool_context import RunContext
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel

SEEN: list[Any] = []


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


def model() -> TestModel:
    return TestModel(
        [
            {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
            {"tool_calls": [{"name": "peek", "arguments": {}}]},
            "Done.",
        ]
    )


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def agent_with(rt: Any, db: SqliteDb, **options: Any) -> Agent:
    @tool
    async def peek(run_context: RunContext) -> str:
        """Look at the stored run."""
        SEEN.append(await agent.aget_run_output(run_context.run_id))
        return "looked"

    agent = Agent(rt, model(), tools=[add, peek], db=db, **options)
    return agent


def test_tool_batch_writes_the_run_after_each_batch(rt, tmp_path):
    SEEN.clear()
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    with agent_with(rt, db, checkpoint="tool-batch") as agent:
        done = agent.run("Add 1 and 2, then look")
        (mid,) = SEEN
        assert mid is not None and mid.status == "running"
        assert [m.role for m in mid.messages] == ["user", "assistant", "tool"]
        assert mid.last_checkpoint_at_message_index == 3
        assert done.status == "completed" and done.content == "Done."
        stored = agent.get_run_output(done.run_id)
        assert stored.status == "completed" and stored.last_checkpoint_at_message_index == 5
        # a checkpointed run is taken up from where it was written
        again = Agent(rt, TestModel(["Again."]), db=db)
        with again:
            taken = again.continue_run(
                run_id=done.run_id, session_id=done.session_id, continue_from=3, fork=True
            )
        assert taken.content == "Again." and taken.forked_from_message_index == 3


def test_runs_writes_only_at_the_end(rt, tmp_path):
    SEEN.clear()
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    with agent_with(rt, db) as agent:
        assert agent.checkpoint is None
        agent.run("Add 1 and 2, then look")
        assert SEEN == [None]
    with agent_with(rt, db, checkpoint="runs") as agent:
        agent.run("Add 1 and 2, then look")
        assert SEEN == [None, None]


@pytest.mark.parametrize(("value", "says"), [("tools", "Agno 3.0"), ("always", "tool-batch")])
def test_what_checkpoint_refuses(rt, value, says):
    with pytest.raises(InvalidInputError, match=says) as raised:
        Agent(rt, TestModel(["x"]), checkpoint=value)
    assert raised.value.errors[0]["path"] == "checkpoint"
