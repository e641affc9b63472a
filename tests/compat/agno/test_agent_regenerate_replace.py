"""Agno 2.9's ``continue_run(regenerate=True)`` replacing the run it regenerates (its
default, ``replace_original`` None or True): the new run is stored, the earlier one stays
in the db marked ``regenerated`` (`RunStatus.regenerated`) and no history built from the
session reads it again; ``replace_original=False`` keeps both. On the scripted test model,
with real SQLite, the in-memory db and PostgreSQL stores."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.in_memory import InMemoryDb
from ferrule.db.postgres import PostgresDb
from ferrule.db.sqlite import SqliteDb
from ferrule.run.base import RunStatus
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ModelError
from ferrule_kit.testing.postgres import postgres_server_fixture
from ferrule_testmodel import TestModel

postgres_server = postgres_server_fixture(scope="module")


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


@pytest.fixture(params=["sqlite", "in_memory", "postgres"])
def make_db(request, tmp_path) -> Callable[[], Any]:
    if request.param == "sqlite":
        return lambda: SqliteDb(db_file=str(tmp_path / "runs.db"))
    if request.param == "in_memory":
        db = InMemoryDb()
        return lambda: db
    server = request.getfixturevalue("postgres_server")
    schema = f"regen_{request.node.name.split('[')[0][-20:]}"
    return lambda: PostgresDb(db_url=server.dsn(), db_schema=schema)


def sent(agent: Agent) -> list[tuple[str, str]]:
    """The messages (role, text) of the last request the agent's model got, no system."""
    requests = agent.runtime.kernel.component(agent._component).requests
    return [(m.role, m.text) for m in requests[-1].messages if m.role != "system"]


def contents(messages: list[Any]) -> list[str]:
    return [m.content for m in messages]


def test_regenerate_replaces_the_original_in_the_session(rt, make_db):
    model = TestModel(["Facts, take one.", "Facts, take two.", "Weirder facts.", "Noted."])
    options = {"db": make_db(), "session_id": "regen", "add_history_to_context": True}
    with Agent(rt, model, **options) as agent:
        q1 = agent.run("Three rare facts")
        r1 = agent.continue_run(run_id=q1.run_id, regenerate=True)
        assert r1.content == "Facts, take two."
        assert r1.run_id != q1.run_id and r1.status == RunStatus.completed
        assert r1.regenerated_from == q1.run_id and r1.forked_from_run_id == q1.run_id
        # the original is kept, marked; the regenerated run stands in its place
        kept = agent.get_run_output(q1.run_id)
        assert kept.status == RunStatus.regenerated and kept.content == "Facts, take one."
        assert agent.get_run_output(r1.run_id).status == "completed"
        # regenerate the latest run again, steering it: r1 is replaced in turn
        r1b = agent.continue_run(
            run_id=r1.run_id, regenerate=True, additional_instructions="Make them weirder."
        )
        assert r1b.content == "Weirder facts."
        assert agent.get_run_output(r1.run_id).status == "regenerated"
        # history built from the session afterwards sees only the latest run
        agent.run("Thanks")
        assert sent(agent) == [
            ("user", "Three rare facts"),
            ("user", "Make them weirder."),
            ("assistant", "Weirder facts."),
            ("user", "Thanks"),
        ]
        assert "Facts, take one." not in contents(agent.get_session_messages())
        assert "Facts, take two." not in contents(agent.get_session_messages())
        session = agent.get_session()
        assert "Facts, take one." not in contents(session.get_messages())
        statuses = [run.status for run in session.runs]
        assert statuses == ["regenerated", "regenerated", "completed", "completed"]
        # Agno's chat history is of runs of any status: every attempt is there
        assert "Facts, take one." in contents(agent.get_chat_history())


def test_replace_original_false_keeps_both_runs_in_the_history(rt, make_db):
    model = TestModel(["Ocean facts.", "Ocean haiku.", "Welcome."])
    options = {"db": make_db(), "session_id": "both", "add_history_to_context": True}
    with Agent(rt, model, **options) as agent:
        q2 = agent.run("Three ocean facts")
        r2 = agent.continue_run(
            run_id=q2.run_id,
            regenerate=True,
            replace_original=False,
            additional_instructions="Now in haiku form.",
        )
        assert r2.regenerated_from == q2.run_id
        assert agent.get_run_output(q2.run_id).status == "completed"
        agent.run("Thanks")
        assert sent(agent) == [
            ("user", "Three ocean facts"),
            ("assistant", "Ocean facts."),
            ("user", "Three ocean facts"),
            ("user", "Now in haiku form."),
            ("assistant", "Ocean haiku."),
            ("user", "Thanks"),
        ]


def test_acontinue_run_replaces_too(rt, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))

    async def main() -> tuple[Any, Any]:
        async with Agent(rt, TestModel(["One.", "Two."]), db=db, session_id="a") as agent:
            first = await agent.arun("Count")
            again = await agent.acontinue_run(
                run_id=first.run_id, regenerate=True, replace_original=True
            )
            return await agent.aget_run_output(first.run_id), again

    original, again = asyncio.run(main())
    assert original.status == RunStatus.regenerated and again.content == "Two."


def test_a_failed_regeneration_replaces_nothing(rt, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    model = TestModel(["Kept.", {"error": "the model fell over"}])
    with Agent(rt, model, db=db, session_id="f") as agent:
        first = agent.run("Say it")
        failed = agent.continue_run(run_id=first.run_id, regenerate=True)
        assert failed.status == "error" and isinstance(failed.error, ModelError)
        assert "fell over" in failed.content
        assert agent.get_run_output(first.run_id).status == "completed"
        assert contents(agent.get_session_messages()) == ["Say it", "Kept."]


def test_a_run_given_without_a_db_is_regenerated_as_before(rt):
    with Agent(rt, TestModel(["One.", "Two."])) as agent:
        first = agent.run("Count")
        again = agent.continue_run(first, regenerate=True)
        assert again.content == "Two." and again.regenerated_from == first.run_id


@pytest.mark.parametrize("value", ["yes", 1])
def test_replace_original_is_a_flag(rt, value):
    with Agent(rt, TestModel(["x"])) as agent:
        first = agent.run("hi")
        with pytest.raises(InvalidInputError) as raised:
            agent.continue_run(first, regenerate=True, replace_original=value)
        assert raised.value.errors[0]["path"] == "replace_original"


def test_the_status_is_agnos_member_in_lower_case():
    assert RunStatus("regenerated") is RunStatus.regenerated == "regenerated"
    with pytest.raises(InvalidInputError, match="lower case"):
        RunStatus("REGENERATED")
