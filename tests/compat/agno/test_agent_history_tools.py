"""Agno's history tools and summary manager on ferrule's sessions, stored in SQLite:
``read_chat_history`` (get_chat_history), ``read_tool_call_history``
(get_tool_call_history), ``search_past_sessions`` (search_past_sessions,
read_past_session; Agno's older ``search_session_history`` / ``num_history_sessions``
too), and ``session_summary_manager``. The model is OpenAI's wire on the loopback server
(`wire`: conftest): the tests script its calls and read what each tool answered."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.models.openai import OpenAIChat
from ferrule.session.summary import SessionSummaryManager
from ferrule.tools import tool
from ferrule_kernel import InvalidInputError


def texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content)
    return content or ""


def tool_result(body: dict[str, Any]) -> str:
    """What the last tool call answered, as the model was sent it."""
    return texts(next(m for m in reversed(body["messages"]) if m["role"] == "tool"))


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


@pytest.fixture
def db(tmp_path):
    return SqliteDb(db_file=str(tmp_path / "agno.db"))


def test_the_model_reads_the_chat_history_with_a_tool(wire, db):
    agent = Agent(model=OpenAIChat(id="gpt-4o"), db=db, session_id="s1", read_chat_history=True)
    wire.says("Hello Ann.")
    agent.run("My name is Ann.")
    wire.calls("get_chat_history", num_chats=1)
    wire.says("Your name is Ann.")
    assert agent.run("What is my name?").content == "Your name is Ann."
    agent.delete()
    assert "get_chat_history" in tool_names(wire.bodies[1])
    history = json.loads(tool_result(wire.bodies[2]))
    assert [(m["role"], m["content"]) for m in history] == [
        ("user", "My name is Ann."),
        ("assistant", "Hello Ann."),
    ]


def test_the_model_reads_the_tool_call_history(wire, db):
    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        db=db,
        session_id="s1",
        tools=[get_weather],
        read_tool_call_history=True,
    )
    wire.calls("get_weather", city="Oslo")
    wire.says("Sunny in Oslo.")
    agent.run("Weather in Oslo?")
    wire.calls("get_tool_call_history", num_calls=5)
    wire.says("You asked about Oslo.")
    agent.run("What did you look up?")
    agent.delete()
    calls = json.loads(tool_result(wire.bodies[3]))
    assert len(calls) == 1
    assert calls[0]["function"]["name"] == "get_weather"
    assert json.loads(calls[0]["function"]["arguments"]) == {"city": "Oslo"}


def test_without_a_db_the_history_tools_read_nothing(wire):
    agent = Agent(model=OpenAIChat(id="gpt-4o"), read_chat_history=True, search_past_sessions=True)
    wire.calls("get_chat_history")
    wire.calls("read_past_session", session_id="s9")
    wire.says("Nothing yet.")
    agent.run("What did we say?")
    agent.delete()
    assert json.loads(tool_result(wire.bodies[1])) == []
    assert tool_result(wire.bodies[2]) == "No database configured."


def past_session(db: SqliteDb, session_id: str, user_id: str, said: str) -> None:
    agent = Agent(model=OpenAIChat(id="gpt-4o"), db=db, session_id=session_id, user_id=user_id)
    agent.run(said)
    agent.delete()


def test_the_model_searches_and_reads_the_users_past_sessions(wire, db):
    wire.says("Noted: Lisbon.", "Noted: a cat.", "Noted: secret.")
    past_session(db, "trip", "ann", "I am going to Lisbon in May.")
    past_session(db, "pets", "ann", "I have a cat called Tom.")
    past_session(db, "other", "bob", "My password hint is blue.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        db=db,
        session_id="now",
        user_id="ann",
        search_past_sessions=True,
        num_past_session_runs_in_search=1,
    )
    wire.calls("search_past_sessions")
    wire.calls("read_past_session", session_id="trip")
    wire.calls("read_past_session", session_id="other")  # bob's: not ann's to read
    wire.says("You are going to Lisbon.")
    assert agent.run("Where am I travelling?").content == "You are going to Lisbon."
    agent.delete()
    assert {"search_past_sessions", "read_past_session"} <= set(tool_names(wire.bodies[3]))
    found = json.loads(tool_result(wire.bodies[4]))
    assert [s["session_id"] for s in found] == ["pets", "trip"]  # newest first, ann's only
    assert found[1]["runs"] == [
        {"user": "I am going to Lisbon in May.", "assistant": "Noted: Lisbon."}
    ]
    read = tool_result(wire.bodies[5])
    assert read.startswith("Session: trip")
    assert "User: I am going to Lisbon in May." in read and "Assistant: Noted: Lisbon." in read
    assert tool_result(wire.bodies[6]) == "Session not found."


def test_the_number_of_past_sessions_is_limited(wire, db):
    wire.says("one", "two")
    past_session(db, "a", "ann", "first")
    past_session(db, "b", "ann", "second")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        db=db,
        session_id="now",
        user_id="ann",
        search_session_history=True,  # Agno's older names
        num_history_sessions=1,
    )
    assert agent.search_past_sessions is True and agent.num_past_sessions_to_search == 1
    wire.calls("search_past_sessions")
    wire.says("Done.")
    agent.run("What did we talk about?")
    agent.delete()
    assert [s["session_id"] for s in json.loads(tool_result(wire.bodies[3]))] == ["b"]


def test_history_tools_are_off_by_default_and_checked(wire, db):
    wire.says("Hi.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), db=db)
    agent.run("Hi")
    agent.delete()
    assert "tools" not in wire.last
    for option, value in (
        ("read_chat_history", "yes"),
        ("read_tool_call_history", 1),
        ("search_past_sessions", "yes"),
        ("num_past_sessions_to_search", -1),
        ("num_history_sessions", "3"),
        ("session_summary_manager", "a manager"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            Agent(model=OpenAIChat(id="gpt-4o"), **{option: value})
        assert caught.value.errors[0]["path"] == option


def test_a_session_summary_manager_writes_the_summary(wire, db):
    manager = SessionSummaryManager(
        model=OpenAIChat(id="gpt-4o-mini"),
        session_summary_prompt="Summarize it for a travel agent.",
    )
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        db=db,
        session_id="s1",
        enable_session_summaries=True,
        session_summary_manager=manager,
    )
    assert agent.add_session_summary_to_context is True
    wire.says("Lisbon is lovely in May.")
    wire.says(json.dumps({"summary": "Ann plans a May trip to Lisbon.", "topics": ["travel"]}))
    agent.run("I am going to Lisbon in May.")
    summary = agent.get_session_summary()
    agent.delete()
    assert summary is not None and summary.summary == "Ann plans a May trip to Lisbon."
    assert manager.summaries_updated is True
    asked = wire.bodies[1]
    assert asked["model"] == "gpt-4o-mini"
    assert "Summarize it for a travel agent." in texts(asked["messages"][0])


def test_a_summary_manager_alone_adds_the_summary_but_writes_none(wire, db):
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        db=db,
        session_summary_manager=SessionSummaryManager(),
    )
    assert agent.add_session_summary_to_context is True
    wire.says("Hi.")
    agent.run("Hi")
    agent.delete()
    assert len(wire.bodies) == 1  # as Agno's: summaries are written with enable_session_summaries
