"""Agno's ``Agent.get_system_message`` / ``aget_system_message`` on a real SQLite store
with the test model: the system message a run of a stored session starts with (the one
the model is then sent), as Agno's `Message`, with the session's state, the user's
memories, the given tools' instructions and the run context's state."""

from __future__ import annotations

import asyncio

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.schemas.memory import UserMemory
from ferrule.db.sqlite import SqliteDb
from ferrule.models.message import Message
from ferrule.tools import Toolkit
from ferrule.tools.tool_context import RunContext
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


@pytest.fixture
def db(tmp_path):
    return SqliteDb(db_file=str(tmp_path / "agent.db"))


def sent_system(agent: Agent) -> str:
    """The system message of the last request the agent's test model received."""
    requests = agent.runtime.kernel.component(agent._component).requests
    first = requests[-1].messages[0]
    assert first.role == "system"
    return first.text


def test_it_is_what_the_next_run_is_sent(rt, db):
    with Agent(
        rt,
        TestModel(["Noted.", "Again."]),
        db=db,
        user_id="ann",
        session_id="s1",
        instructions="Answer in one line.",
        session_state={"city": "Paris"},
        add_session_state_to_context=True,
        add_memories_to_context=True,
    ) as agent:
        db.upsert_user_memory(UserMemory(memory="Ann likes ferries", user_id="ann"))
        agent.run("Hello")
        session = agent.get_session()
        message = agent.get_system_message(session)
        assert isinstance(message, Message) and message.role == "system"
        assert "Answer in one line." in message.content
        assert "Paris" in message.content and "Ann likes ferries" in message.content
        agent.run("Once more")
        assert sent_system(agent) == message.content


def test_the_callers_switches_tools_and_run_context(rt, db):
    guide = Toolkit(name="guide", instructions="Use the ferry timetable.", add_instructions=True)
    with Agent(rt, TestModel(["ok"]), db=db, session_state={"city": "Paris"}) as agent:
        agent.run("Hi", session_id="s2")
        session = agent.get_session("s2")
        plain = agent.get_system_message(session)
        assert plain is None or "Paris" not in plain.content
        with_state = agent.get_system_message(session, add_session_state_to_context=True)
        assert "Paris" in with_state.content
        context = RunContext(run_id="r", session_id="s2", session_state={"city": "Lyon"})
        lyon = agent.get_system_message(
            session, run_context=context, add_session_state_to_context=True
        )
        assert "Lyon" in lyon.content and "Paris" not in lyon.content
        tooled = agent.get_system_message(session, tools=[guide])
        assert "Use the ferry timetable." in tooled.content
        assert plain is None or "ferry timetable" not in plain.content


def test_the_async_twin_and_a_role_of_the_agents(rt, db):
    async def main() -> Message | None:
        async with Agent(
            rt,
            TestModel(["ok"]),
            db=db,
            description="A harbour guide.",
            system_message_role="developer",
        ) as agent:
            await agent.arun("Hi", session_id="s3")
            return await agent.aget_system_message(await agent.aget_session("s3"))

    message = asyncio.run(main())
    assert message is not None and message.role == "developer"
    assert message.content.startswith("A harbour guide.")


def test_no_system_message_is_none(rt, db):
    with Agent(rt, TestModel(["ok"]), db=db, build_context=False) as agent:
        agent.run("Hi", session_id="s4")
        assert agent.get_system_message(agent.get_session("s4")) is None
