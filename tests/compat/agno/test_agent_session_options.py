"""Agno's Agent session options and methods on a real SQLite store, with the test model
(what it was sent read from its request log): ``introduction``, ``cache_session``,
``overwrite_db_session_state``, what a stored run keeps (``store_tool_messages``,
``store_media``, ``store_history_messages``), ``max_tool_calls_from_history``; the
session's name (given or written by the model), summary, metrics, chat history in Agno's
`Message` shape, `fork_session`, a user's own sessions and runs."""

from __future__ import annotations

import io

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.media import Image
from ferrule.metrics import SessionMetrics
from ferrule.models.message import Message
from ferrule.session import AgentSession, SessionSummary
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel
from PIL import Image as PillowImage


def png() -> bytes:
    buffer = io.BytesIO()
    PillowImage.new("RGB", (2, 2), (10, 200, 10)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


@pytest.fixture
def db(tmp_path):
    return SqliteDb(db_file=str(tmp_path / "agent.db"))


def sent(agent: Agent) -> list:
    """The messages of each request the agent's test model received."""
    requests = agent.runtime.kernel.component(agent._component).requests
    return [[(m.role, m.text) for m in r.messages] for r in requests]


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def echo(text: str) -> str:
    """Say it back."""
    return f"echo: {text}"


def test_chat_history_is_agnos_messages(rt, db):
    with Agent(rt, TestModel(["Hi Ann."]), db=db) as agent:
        agent.run("I am Ann")
        for message in agent.get_chat_history():
            assert isinstance(message, Message)
        history = agent.get_chat_history()
        assert [(m.role, m.content) for m in history] == [
            ("user", "I am Ann"),
            ("assistant", "Hi Ann."),
        ]


def test_introduction_is_a_new_sessions_first_reply(rt, db):
    with Agent(
        rt,
        TestModel(["Sure."]),
        db=db,
        introduction="Hello, I plan trips.",
        add_history_to_context=True,
    ) as agent:
        agent.run("Plan one")
        assert sent(agent)[-1] == [("assistant", "Hello, I plan trips."), ("user", "Plan one")]
        assert [m.content for m in agent.get_chat_history()] == [
            "Hello, I plan trips.",
            "Plan one",
            "Sure.",
        ]
        assert len(agent.get_session().runs) == 2


def test_cache_session_reads_the_session_once(rt, db):
    with Agent(
        rt, TestModel(["a", "b"]), db=db, cache_session=True, add_session_state_to_context=True
    ) as agent:
        agent.run("one")
        cached = agent.cached_session
        assert isinstance(cached, AgentSession) and cached.session_id == agent.session_id
        # another writer changes the stored state: this agent's run starts from its cache
        with Agent(rt, TestModel(), db=db, session_id=agent.session_id) as other:
            other.update_session_state({"seen_by_other": True})
        second = agent.run("two")
        system = sent(agent)[-1][0][1]
        assert "<session_state>" in system and "seen_by_other" not in system
        # and its write still keeps the other's change (compare-and-set)
        assert second.session_state == {"seen_by_other": True}
        assert agent.get_session_state() == {"seen_by_other": True}


def test_overwrite_db_session_state(rt, db):
    with Agent(rt, TestModel(["a"]), db=db, session_id="s", session_state={"n": 1}) as first:
        first.run("x", session_state={"extra": True})
    with Agent(
        rt,
        TestModel(["b"]),
        db=db,
        session_id="s",
        session_state={"n": 2},
        overwrite_db_session_state=True,
    ) as second:
        assert second.run("y").session_state == {"n": 2}
        assert second.get_session_state() == {"n": 2}


def test_what_a_stored_run_keeps(rt, db):
    model = TestModel([call("echo", text="hi"), "Said it."])
    with Agent(rt, model, db=db, tools=[echo], store_tool_messages=False) as agent:
        output = agent.run("Echo hi")
        assert [m.role for m in output.messages] == ["user", "assistant", "tool", "assistant"]
        stored = agent.get_run_output(output.run_id)
        assert [(m.role, m.content) for m in stored.messages] == [
            ("user", "Echo hi"),
            ("assistant", "Said it."),
        ]
    with Agent(rt, TestModel(["A dot."]), db=db, store_media=False) as agent:
        output = agent.run("What is it?", images=[Image(content=png(), format="png")])
        stored = agent.get_run_output(output.run_id)
        assert stored.messages[0].content == "What is it?"  # its text, without the image
        assert len(output.messages[0].content) == 2  # the run itself had its image


def test_store_history_messages(rt, db):
    with Agent(
        rt, TestModel(["a", "b"]), db=db, add_history_to_context=True, store_history_messages=True
    ) as agent:
        agent.run("one")
        agent.run("two")
        own = [m.content for m in agent.get_session_messages()]
        assert own == ["one", "a", "two", "b"]
        every = [m.content for m in agent.get_session_messages(skip_history_messages=False)]
        assert every == ["one", "a", "one", "a", "two", "b"]


def test_max_tool_calls_from_history(rt, db):
    model = TestModel([call("echo", text="1"), "one", call("echo", text="2"), "two", "three"])
    with Agent(
        rt,
        model,
        db=db,
        tools=[echo],
        add_history_to_context=True,
        max_tool_calls_from_history=1,
    ) as agent:
        agent.run("first")
        agent.run("second")
        agent.run("third")
        shown = sent(agent)[-1]
        assert ("tool", "echo: 2") in shown and ("tool", "echo: 1") not in shown
        assert ("assistant", "one") in shown  # the answer stays, its call goes


def test_session_names_given_and_written_by_the_model(rt, db):
    with Agent(rt, TestModel(["Sure.", '"Trip to Rome"']), db=db) as agent:
        agent.run("Plan a trip to Rome")
        session = agent.set_session_name(session_name="Rome")
        assert session.session_data["session_name"] == "Rome" == agent.get_session_name()
        assert agent.set_session_name(autogenerate=True).session_data["session_name"] == (
            "Trip to Rome"
        )
        with pytest.raises(InvalidInputError):
            agent.set_session_name()


def test_session_summary_and_metrics(rt, db):
    model = TestModel(
        [
            {"text": "Rome in May.", "usage": {"input_tokens": 10, "output_tokens": 3}},
            {
                "output": {"summary": "A trip to Rome.", "topics": ["travel"]},
                "usage": {"input_tokens": 20, "output_tokens": 6},
            },
        ]
    )
    with Agent(rt, model, db=db, enable_session_summaries=True) as agent:
        agent.run("When to visit Rome?")
        summary = agent.get_session_summary()
        assert isinstance(summary, SessionSummary)
        assert (summary.summary, summary.topics) == ("A trip to Rome.", ["travel"])
        metrics = agent.get_session_metrics()
        assert isinstance(metrics, SessionMetrics)
        # the summary model's call counts in the run's metrics, as Agno counts it
        assert (metrics.input_tokens, metrics.output_tokens, metrics.total_tokens) == (30, 9, 39)
        shares = {kind: [m.total_tokens for m in items] for kind, items in metrics.details.items()}
        assert shares == {"model": [13], "session_summary_model": [26]}


def test_fork_session_copies_the_runs_under_new_ids(rt, db):
    with Agent(rt, TestModel(["a", "b"]), db=db, session_state={"k": 1}) as agent:
        agent.run("one", user_id="ann")
        forked = agent.fork_session(user_id="ann")
        assert forked != agent.session_id
        original = agent.get_session()
        copy = agent.get_session(forked, user_id="ann")
        assert [r.content for r in copy.runs] == ["a"]
        assert copy.runs[0].run_id != original.runs[0].run_id
        assert copy.session_data["session_state"] == {"k": 1}
        assert copy.metadata["forked_from_session_id"] == agent.session_id
        agent.run("two", session_id=forked, user_id="ann")  # the fork goes its own way
        assert len(agent.get_session().runs) == 1
        with pytest.raises(InvalidInputError):
            agent.fork_session(source_session_id="nothing-here")


def test_a_users_sessions_and_runs_only(rt, db):
    with Agent(rt, TestModel(["a"]), db=db, user_id="ann") as agent:
        output = agent.run("hi")
        assert agent.get_session(user_id="bob") is None
        assert agent.get_run_output(output.run_id, user_id="bob") is None
        assert agent.get_run_output(output.run_id, user_id="ann").content == "a"
        agent.delete_session(agent.session_id, user_id="bob")  # not bob's: kept
        assert agent.get_session() is not None
        agent.delete_session(agent.session_id, user_id="ann")
        assert agent.get_session() is None
