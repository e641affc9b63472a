"""Agno 2.9's continuation of an ended run: ``continue_run`` / ``acontinue_run`` with
``input``, ``continue_from``, ``fork``, ``regenerate`` (``additional_instructions``,
``replace_original``) and ``acontinue_run(background=True)``, on the scripted test model
and a real SQLite store: what the model is sent, the new run's lineage (kept in the db),
the earlier run left as it was, and the errors of what cannot be asked together."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.tools import tool
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel

CALLS: list[int] = []


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    CALLS.append(a + b)
    return a + b


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


def sent(agent: Agent) -> list[tuple[str, str]]:
    """The messages (role, text) of the last request the agent's test model got, system
    messages left out."""
    requests = agent.runtime.kernel.component(agent._component).requests
    return [(m.role, m.text) for m in requests[-1].messages if m.role != "system"]


def test_input_continues_a_completed_run_as_a_fork_kept_in_the_db(rt, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    with Agent(rt, TestModel(["Four.", "Six."]), db=db, session_id="s1") as agent:
        first = agent.run("What is 2+2?")
        forked = agent.continue_run(run_id=first.run_id, input="And 3+3?")
        assert sent(agent) == [
            ("user", "What is 2+2?"),
            ("assistant", "Four."),
            ("user", "And 3+3?"),
        ]
        assert forked.content == "Six."
        assert forked.run_id != first.run_id
        assert forked.forked_from_run_id == first.run_id
        assert forked.forked_from_message_index == 2
        assert forked.regenerated_from is None
        stored = agent.get_run_output(forked.run_id)
        assert stored is not None and stored.forked_from_run_id == first.run_id
        assert [m.content for m in stored.messages] == ["What is 2+2?", "Four.", "And 3+3?", "Six."]
        original = agent.get_run_output(first.run_id)
        assert original is not None and original.content == "Four."
        assert original.forked_from_run_id is None


def test_regenerate_keeps_the_tool_results_and_takes_additional_instructions(rt, tmp_path):
    CALLS.clear()
    model = TestModel(
        [{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, "It is 5.", "5."]
    )
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    with Agent(rt, model, tools=[add], db=db) as agent:
        first = agent.run("Add 2 and 3")
        again = agent.continue_run(
            first,
            regenerate=True,
            replace_original=False,
            additional_instructions="Just the number.",
        )
        assert CALLS == [5]  # the tool is not called again
        roles = [role for role, _ in sent(agent)]
        assert roles == ["user", "assistant", "tool", "user"]
        assert sent(agent)[-1] == ("user", "Just the number.")
        assert again.content == "5."
        assert again.regenerated_from == first.run_id
        assert again.forked_from_message_index == 3
        assert agent.get_run_output(first.run_id).content == "It is 5."


def test_continue_from_never_cuts_a_tool_call_from_its_result(rt):
    model = TestModel(
        [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}, "Two.", "Again."]
    )
    with Agent(rt, model, tools=[add]) as agent:
        first = agent.run("Add 1 and 1")
        # index 2 keeps the call but not its result: moved back before the call
        forked = agent.continue_run(first, continue_from=2, input="Try once more")
        assert forked.forked_from_message_index == 1
        assert forked.last_checkpoint_at_message_index == 1
        assert sent(agent) == [("user", "Add 1 and 1"), ("user", "Try once more")]


def test_continue_from_last_user_and_fork(rt):
    with Agent(rt, TestModel(["One.", "Other."])) as agent:
        first = agent.run("Say something")
        forked = agent.continue_run(first, continue_from="last_user", fork=True)
        assert sent(agent) == [("user", "Say something")]
        assert forked.content == "Other." and forked.forked_from_run_id == first.run_id


def test_a_fork_sees_the_history_its_run_had(rt, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    model = TestModel(["A1", "A2", "A1 again"])
    with Agent(rt, model, db=db, session_id="s2", add_history_to_context=True) as agent:
        first = agent.run("Q1")
        agent.run("Q2")
        agent.continue_run(first, regenerate=True, replace_original=False)
        # the later run is not history to the first one's regeneration
        assert sent(agent) == [("user", "Q1")]


def test_acontinue_run_in_the_background(rt, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))

    async def main() -> tuple[Any, Any]:
        async with Agent(rt, TestModel(["Four.", "Six."]), db=db) as agent:
            first = await agent.arun("What is 2+2?")
            pending = await agent.acontinue_run(first, input="And 3+3?", background=True)
            assert pending.status == "pending"
            for _ in range(100):
                done = await agent.aget_run_output(pending.run_id)
                if done is not None and done.status == "completed":
                    return pending, done
                await asyncio.sleep(0.05)
            return pending, done

    pending, done = asyncio.run(main())
    assert done.run_id == pending.run_id and done.content == "Six."
    assert done.forked_from_run_id is not None


def test_a_background_continuation_needs_a_db(rt):
    with Agent(rt, TestModel(["x"])) as agent:
        first = agent.run("hi")
        with pytest.raises(InvalidInputError) as raised:
            agent.acontinue_run(first, input="more", background=True)
        assert raised.value.errors[0]["path"] == "db"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"replace_original": False}, "replace_original"),
        ({"regenerate": True, "fork": True, "replace_original": False}, "fork"),
        ({"input": "a", "additional_instructions": "b"}, "additional_instructions"),
        ({"regenerate": True, "replace_original": "no"}, "replace_original"),
        ({"regenerate": True, "continue_from": 1, "replace_original": False}, "continue_from"),
        ({"continue_from": "middle"}, "continue_from"),
        ({"continue_from": -1}, "continue_from"),
        ({"fork": "yes"}, "fork"),
        ({"input": 3}, "input"),
    ],
)
def test_what_cannot_be_asked_together(rt, options, field):
    with Agent(rt, TestModel(["x"])) as agent:
        first = agent.run("hi")
        with pytest.raises(InvalidInputError) as raised:
            agent.continue_run(first, **options)
        assert raised.value.errors[0]["path"] == field


def test_continue_from_past_the_end_and_a_paused_run(rt):
    @tool(requires_confirmation=True)
    def ship(box: str) -> str:
        """Ship a box."""
        return "shipped"

    model = TestModel([{"tool_calls": [{"name": "ship", "arguments": {"box": "b"}}]}, "x"])
    with Agent(rt, model, tools=[ship]) as agent:
        paused = agent.run("Ship it")
        assert paused.status == "paused"
        with pytest.raises(InvalidInputError) as raised:
            agent.continue_run(paused, input="and more")
        assert "paused" in str(raised.value)
    with Agent(rt, TestModel(["x"])) as agent:
        first = agent.run("hi")
        with pytest.raises(InvalidInputError, match="past the run's 2 messages"):
            agent.continue_run(first, continue_from=5)
