"""The Agent reference's surface on a real store: `run(input)` and its `RunOutput`, typed
events, the system message from name / description / instructions, sessions in SQLite
files and a throwaway PostgreSQL server (history windows, session state, the session
methods), a paused run continued by another process, and an Agent over `ferrule serve`
whose storage component lives on the server. Models are the deterministic test model;
what it received is read from its request log."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from ferrule import Agent, AsyncRuntime, Message, Runtime, tool
from ferrule.agent import (
    AgentSession,
    MessageOutput,
    RunCompletedEvent,
    RunContentEvent,
    RunErrorEvent,
    RunPausedEvent,
    RunStartedEvent,
    ToolCallCompletedEvent,
    ToolCallStartedEvent,
    UnknownRunError,
)
from ferrule.db.postgres import PostgresDb
from ferrule.db.sqlite import SqliteDb
from ferrule.run.agent import (
    ModelRequestCompletedEvent,
    ModelRequestStartedEvent,
    RunContentCompletedEvent,
)
from ferrule.runtime import new_kernel
from ferrule.server import ServerThread
from ferrule.shared_runtime import _stop_default_runtime
from ferrule.tools import ToolContext
from ferrule_kit.errors import ModelError
from ferrule_kit.stores.storage import STORAGE_DIR_ENV
from ferrule_kit.testing.postgres import PostgresServer, postgres_server_fixture
from ferrule_testmodel import TestModel

pytestmark = pytest.mark.timeout(120)

postgres_server = postgres_server_fixture()


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


@pytest.fixture(scope="module")
def postgres_dsn(postgres_server: PostgresServer) -> str:
    return postgres_server.create_database()


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path):
    """A fresh store of each backend (a Postgres schema of its own per test)."""
    if request.param == "sqlite":
        return SqliteDb(db_file=tmp_path / "agent.db")
    dsn = request.getfixturevalue("postgres_dsn")
    return PostgresDb(db_url=dsn, db_schema=f"t_{uuid.uuid4().hex[:16]}")


def sent(agent: Agent) -> list:
    """The messages of each request the agent's test model received."""
    return [r.messages for r in agent.runtime.kernel.component(agent._component).requests]


def texts(messages) -> list[tuple[str, str]]:
    """(role, text) of ferrule's messages, or of Agno's (``m.content``)."""
    return [(m.role, m.text if hasattr(m, "text") else m.content) for m in messages]


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


# -- run(input) and RunOutput ------------------------------------------------------------------


def test_run_returns_a_run_output_and_stores_the_run(rt, tmp_path):
    db = SqliteDb(db_file=tmp_path / "sub" / "agent.db")  # the folder is made, as in Agno
    with Agent(
        rt, TestModel(["Hello, Ann!"]), name="Greeter Bot", db=db, session_id="s1", user_id="ann"
    ) as agent:
        output = agent.run("Hi, I am Ann", metadata={"channel": "test"})
        assert output.content == "Hello, Ann!"
        assert (output.status, output.content_type) == ("completed", "str")
        assert (output.agent_id, output.session_id, output.user_id) == ("greeter-bot", "s1", "ann")
        assert output.metadata == {"channel": "test"}
        assert texts(output.messages) == [("user", "Hi, I am Ann"), ("assistant", "Hello, Ann!")]
        assert len(output.metrics.model_calls) == 1
        stored = agent.get_run_output(output.run_id)
        assert stored is not None and stored.content == "Hello, Ann!"
        assert (stored.status, stored.user_id, stored.metadata) == (
            "completed",
            "ann",
            {"channel": "test"},
        )
        assert texts(stored.messages) == texts(output.messages)
        assert stored.metrics.model_calls[0].output_tokens == 2
        assert agent.get_last_run_output().run_id == output.run_id
        assert agent.get_run_output(output.run_id, session_id="other") is None
    assert (tmp_path / "sub" / "agent.db").is_file()


def test_run_takes_each_kind_of_input(rt):
    with Agent(rt, TestModel()) as agent:  # echoes the last user message
        assert agent.run("plain").content == "plain"
        assert agent.run(Message("user", "a message")).content == "a message"
        assert agent.run({"role": "user", "content": "a dict message"}).content == "a dict message"
        assert agent.run({"city": "Oslo"}).content == '{"city": "Oslo"}'
        listed = agent.run(["two", " parts"], stream=False)
        assert listed.content == "two parts"
        history = [Message("user", "first"), Message("assistant", "ok"), Message("user", "second")]
        output = agent.run(history, stream=False)  # a list of messages, not streamed
        assert output.content == "second" and texts(output.messages)[0] == ("user", "first")


def test_run_on_a_history_still_streams_messages_and_keeps_nothing(rt, langmodel):
    lm = langmodel(rt, TestModel(["It is blue."]))
    with Agent(lm, system_message="Be brief.") as agent:  # Ailoy 0.2's form
        history = [
            Message(role="user", contents="John's favorite color is blue."),
            Message(role="assistant", contents="Noted."),
            Message(role="user", contents="What's John's favorite color?"),
        ]
        outputs = list(agent.run(history))
        assert all(isinstance(o, MessageOutput) for o in outputs)
        assert [o.message.text for o in outputs] == ["It is blue."]
        assert texts(sent(agent)[-1])[0] == ("system", "Be brief.")
        assert agent.get_messages() == [Message("system", "Be brief.")]


def test_a_failed_run_reports_its_typed_error(rt):
    with Agent(rt, TestModel([{"error": "model down"}])) as agent:
        output = agent.run("hi")  # Agno's way: the run is returned with status error
    assert output.status == "error" and output.content == "model down"
    assert isinstance(output.error, ModelError)


async def test_arun_is_awaited_for_its_output_or_iterated(rt):
    with Agent(rt, TestModel(["one", "two", "three"])) as agent:
        output = await agent.arun("first")
        assert output.content == "one"
        events = [e async for e in agent.arun("second", stream=True, stream_events=True)]
        assert [e.event for e in events] == [
            "RunStarted",
            "ModelRequestStarted",
            "RunContent",
            "ModelRequestCompleted",
            "RunContentCompleted",
            "RunCompleted",
        ]
        assert events[-1].content == "two"
        outputs = [o async for o in agent.arun([{"role": "user", "content": "third"}])]
        assert [o.message.text for o in outputs] == ["three"]


async def test_sessions_on_an_async_runtime(tmp_path):
    async with AsyncRuntime() as runtime:
        agent = Agent(runtime, TestModel(["a"]), db=SqliteDb(db_file=tmp_path / "a.db"))
        output = await agent.arun("hi", session_id="async")
        assert (await agent.aget_last_run_output("async")).run_id == output.run_id
        assert texts(await agent.aget_chat_history("async")) == [("user", "hi"), ("assistant", "a")]
        assert (await agent.aget_session("async")).runs[0].content == "a"
        # a sync twin names the agent's async method (not the collaborator doing the work)
        with pytest.raises(TypeError, match=r"this Agent's runtime .* await Agent\.aget_session"):
            agent.get_session("async")
        with pytest.raises(TypeError, match=r"await Agent\.aget_relevant_docs_from_knowledge"):
            agent.get_relevant_docs_from_knowledge("q")
        with pytest.raises(TypeError, match="adelete"):
            agent.delete()
        await agent.adelete()


# -- the system message ------------------------------------------------------------------------


def test_description_and_instructions_make_the_system_message(rt):
    with Agent(
        rt,
        TestModel(["a", "b", "c"]),
        name="Research Assistant",
        description="A helpful AI assistant.",
        instructions=["Search the web for current information", "Cite your sources"],
        use_instruction_tags=True,
    ) as agent:
        agent.run("q")
        assert sent(agent)[-1][0] == Message(
            "system",
            "A helpful AI assistant.\n\n<instructions>\n"
            "- Search the web for current information\n- Cite your sources\n</instructions>",
        )
        agent.instructions = "Answer in French."
        agent.run("q")
        assert sent(agent)[-1][0].text == (
            "A helpful AI assistant.\n\n<instructions>\nAnswer in French.\n</instructions>"
        )
        agent.instructions = lambda agent, session_state: f"You are {agent.name}; {session_state}"
        agent.session_state["topic"] = "AI"
        agent.run("q")
        assert "You are Research Assistant; {'topic': 'AI'}" in sent(agent)[-1][0].text


# -- events ------------------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_stream_events_yields_every_typed_event_in_order(rt):
    model = TestModel([{"tool_calls": [call("add", a=2, b=3)]}, {"text": "It is 5."}])
    with Agent(rt, model, tools=[add], session_id="ev") as agent:
        events = list(agent.run("2+3?", stream=True, stream_events=True))
    kinds = [type(e) for e in events]
    assert kinds[0] is RunStartedEvent and kinds[-1] is RunCompletedEvent
    # Agno's order: each model request in its started/completed pair, the tool calls after
    # the request that asked for them, the content's end before the run's
    assert kinds[1:5] == [
        ModelRequestStartedEvent,
        ModelRequestCompletedEvent,
        ToolCallStartedEvent,
        ToolCallCompletedEvent,
    ]
    assert kinds[5] is ModelRequestStartedEvent and kinds[-3:-1] == [
        ModelRequestCompletedEvent,
        RunContentCompletedEvent,
    ]
    assert set(kinds[6:-3]) == {RunContentEvent}
    assert "".join(e.content for e in events[6:-3]) == "It is 5."
    started, completed = events[3].tool, events[4].tool
    assert (started.name, started.arguments) == ("add", {"a": 2, "b": 3})
    assert (completed.result, completed.error) == (5, None) and completed.duration is not None
    assert events[-1].content == "It is 5." and events[-1].event == "RunCompleted"
    assert {e.run_id for e in events} == {events[0].run_id}
    assert {e.session_id for e in events} == {"ev"}


@pytest.fixture
def default_runtime():
    """`Agent(model=...)` starts the process's default runtime: stopped after the test."""
    yield
    _stop_default_runtime()


def test_stream_true_alone_yields_the_content_once(default_runtime, capsys):
    # the Agent reference's streaming example, as written
    model = TestModel([{"tool_calls": [call("add", a=1, b=1)]}, "Once upon a time, 2."])
    agent = Agent(model=model, name="Streaming Assistant", tools=[add], stream=True)
    for chunk in agent.run("Write a short story"):
        if hasattr(chunk, "content") and chunk.content:
            print(chunk.content, end="", flush=True)
    agent.delete()
    assert capsys.readouterr().out == "Once upon a time, 2."


def test_the_agent_stream_settings_and_a_run_error_event(rt):
    model = TestModel([{"text": "part", "error": "cut off"}] * 2)
    with Agent(rt, model, stream=True) as agent:
        events = list(agent.run("go"))
        assert [e.event for e in events] == ["RunContent", "RunError"]
        assert isinstance(events[-1], RunErrorEvent) and isinstance(events[-1].error, ModelError)
        agent.stream_events = True
        assert [e.event for e in agent.run("go")] == [
            "RunStarted",
            "ModelRequestStarted",
            "RunContent",
            "RunError",
        ]


# -- sessions: history, state, methods ---------------------------------------------------------


def test_history_windows_reach_the_model(rt, db):
    replies = [f"answer {i}" for i in range(1, 6)] + ["w1", "w2", "w3"]
    with Agent(
        rt,
        TestModel(replies),
        db=db,
        session_id="chat",
        add_history_to_context=True,
        num_history_runs=2,
    ) as agent:
        for i in range(1, 6):
            agent.run(f"question {i}")
        assert texts(sent(agent)[-1]) == [
            ("user", "question 3"),
            ("assistant", "answer 3"),
            ("user", "question 4"),
            ("assistant", "answer 4"),
            ("user", "question 5"),
        ]
        # each run was stored once, with its own two messages only
        assert len(agent.get_session_messages()) == 10
        assert len(agent.get_session_messages(last_n_runs=2)) == 4
        assert [m.role for m in agent.get_session_messages(limit=3)] == [
            "assistant",
            "user",
            "assistant",
        ]
        stored, last = agent.get_session().runs[-1], agent.get_last_run_output()
        assert [(m.role, m.content) for m in stored.messages] == [
            (m.role, m.content) for m in last.messages
        ]
        agent.num_history_runs, agent.num_history_messages = None, 3
        agent.run("question 6")
        assert texts(sent(agent)[-1]) == [
            ("assistant", "answer 4"),
            ("user", "question 5"),
            ("assistant", "answer 5"),
            ("user", "question 6"),
        ]
        agent.add_history_to_context = False
        agent.run("question 7")
        assert texts(sent(agent)[-1]) == [("user", "question 7")]
        agent.add_history_to_context = True
        agent.run("question 8", session_id="elsewhere")  # another session has no history
        assert texts(sent(agent)[-1]) == [("user", "question 8")]


def test_query_with_a_db_stores_its_runs_and_reads_history_from_the_session(rt, tmp_path):
    db = SqliteDb(db_file=tmp_path / "q.db")
    with Agent(rt, TestModel(["Hi Ann.", "Ann."]), db=db, session_id="q") as agent:
        list(agent.query("I am Ann"))
    with Agent(
        rt, TestModel(["You are Ann."]), db=db, session_id="q", add_history_to_context=True
    ) as fresh:  # a new agent: the history comes from the db
        responses = list(fresh.query("Who am I?"))
        assert "".join(r.content for r in responses if r.type == "output_text") == "You are Ann."
        assert texts(sent(fresh)[-1]) == [
            ("user", "I am Ann"),
            ("assistant", "Hi Ann."),
            ("user", "Who am I?"),
        ]
        assert [m.content for m in fresh.get_chat_history()] == [
            "I am Ann",
            "Hi Ann.",
            "Who am I?",
            "You are Ann.",
        ]


def add_item(item: str, context: ToolContext) -> str:
    """Add an item to the shopping list.

    Args:
        item: The item.
    """
    context.session_state["items"].append(item)
    return f"added {item}"


def test_session_state_persists_per_session_and_is_injected(rt, db):
    settings = dict(
        db=db,
        session_state={"items": []},
        add_session_state_to_context=True,
        tools=[add_item],
        session_id="shop",
    )
    model = TestModel([{"tool_calls": [call("add_item", item="milk")]}, "Added milk."])
    with Agent(rt, model, **settings) as agent:
        output = agent.run("Add milk")
        assert output.session_state == {"items": ["milk"]}
        assert agent.session_state == {"items": []}  # the defaults are not the session's
    with Agent(rt, TestModel(["You have milk."]), **settings) as agent:
        assert agent.get_session_state() == {"items": ["milk"]}
        agent.run("What is on my list?")
        (system, _user) = sent(agent)[-1]
        assert system.text == '<session_state>\n{"items": ["milk"]}\n</session_state>'
        assert agent.update_session_state({"budget": 10}).startswith("session state updated")
        assert agent.get_session_state() == {"items": ["milk"], "budget": 10}
        assert agent.get_session_state("new-session") == {"items": []}
        agent.update_session_state({"budget": 5}, session_id="new-session")
        assert agent.get_session_state("new-session") == {"items": [], "budget": 5}


def test_run_session_state_is_merged_for_that_run(rt, tmp_path):
    with Agent(
        rt,
        TestModel(["a", "b"]),
        db=SqliteDb(db_file=tmp_path / "s.db"),
        session_state={"mood": "calm", "n": 1},
    ) as agent:
        output = agent.run("x", session_state={"n": 2})
        assert output.session_state == {"mood": "calm", "n": 2}
        assert agent.get_session_state() == {"mood": "calm", "n": 2}


def test_session_state_without_a_db_lives_on_the_agent(rt):
    model = TestModel([{"tool_calls": [call("add_item", item="eggs")]}, "ok", "ok"])
    with Agent(rt, model, tools=[add_item], session_state={"items": []}) as agent:
        agent.run("Add eggs")
        assert agent.session_state == {"items": ["eggs"]} == agent.get_session_state()
        agent.update_session_state({"n": 1})
        assert agent.session_state == {"items": ["eggs"], "n": 1}


def test_get_save_rename_and_delete_a_session(rt, db):
    with Agent(rt, TestModel(["one"]), name="Helper", db=db, user_id="u1") as agent:
        assert agent.get_session() is None
        agent.run("hello")
        session = agent.get_session()
        assert isinstance(session, AgentSession)
        assert (session.session_id, session.agent_id, session.user_id) == (
            agent.session_id,
            "helper",
            "u1",
        )
        assert [r.content for r in session.runs] == ["one"]
        agent.save_session(
            AgentSession(agent.session_id, "helper", "u1", {"session_state": {}}, {"tag": "x"})
        )
        assert agent.get_session().metadata == {"tag": "x"}
        assert len(agent.get_session().runs) == 1  # saving a session keeps its runs
        agent.rename("Renamed")
        assert agent.name == "Renamed" == agent.get_session_name()
        assert agent.get_session().session_data["session_name"] == "Renamed"
        agent.delete_session(agent.session_id)
        assert agent.get_session() is None and agent.get_session_messages() == []


# -- human in the loop across processes --------------------------------------------------------


@tool(requires_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    Path(path).unlink()
    return f"deleted {path}"


CONTINUE_ELSEWHERE = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from ferrule import Agent, tool
    from ferrule.db.sqlite import SqliteDb
    from ferrule_testmodel import TestModel

    @tool(requires_confirmation=True)
    def delete_file(path: str) -> str:
        "Delete a file."
        Path(path).unlink()
        return f"deleted {path}"

    db_file, run_id = sys.argv[1], sys.argv[2]
    agent = Agent(model=TestModel(["It is deleted."]), db=SqliteDb(db_file=db_file),
                  tools=[delete_file])
    output = agent.continue_run(run_id, confirm=True)
    seen = agent.runtime.kernel.component(agent._component).requests[-1].messages
    print(json.dumps({"content": output.content, "status": output.status,
                      "session": output.session_id, "roles": [m.role for m in seen]}))
    """
)


def test_a_paused_run_is_continued_by_another_process(rt, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("x")
    db_file = tmp_path / "hitl.db"
    model = TestModel([{"tool_calls": [call("delete_file", path=str(victim))]}])
    with Agent(
        rt, model, db=SqliteDb(db_file=db_file), tools=[delete_file], system_message="Be careful."
    ) as agent:
        output = agent.run("Delete the victim file", session_id="ops")
        assert output.status == "paused" and output.is_paused
        (requirement,) = output.requirements
        assert requirement.tool_call.name == "delete_file"
        stored = agent.get_run_output(output.run_id)
        assert stored.status == "paused" and stored.requirements[0].tool_call.name == "delete_file"
        assert "ferrule.resume" not in stored.metadata
        assert victim.exists()

    done = subprocess.run(
        [sys.executable, "-c", CONTINUE_ELSEWHERE, str(db_file), output.run_id],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[-1])
    assert reply == {
        "content": "It is deleted.",
        "status": "completed",
        "session": "ops",
        "roles": ["system", "user", "assistant", "tool"],
    }
    assert not victim.exists()

    with Agent(rt, TestModel(), db=SqliteDb(db_file=db_file), session_id="ops") as agent:
        finished = agent.get_run_output(output.run_id)
        assert finished.status == "completed" and finished.content == "It is deleted."
        assert [m.role for m in finished.messages] == ["user", "assistant", "tool", "assistant"]
        assert len(agent.get_session().runs) == 1  # the paused run was replaced in place
        with pytest.raises(UnknownRunError):
            agent.continue_run(output.run_id, confirm=True)  # not paused any more


def test_a_paused_run_continues_in_process_with_requirements(rt, tmp_path):
    victim = tmp_path / "v.txt"
    victim.write_text("x")
    model = TestModel([{"tool_calls": [call("delete_file", path=str(victim))]}, "Kept it."])
    with Agent(rt, model, db=SqliteDb(db_file=tmp_path / "p.db"), tools=[delete_file]) as agent:
        paused = agent.run("Delete it")
        events = list(
            agent.continue_run(
                paused.run_id,
                [r.reject("not today") for r in paused.requirements],
                stream=True,
                stream_events=True,
            )
        )
        assert [e.event for e in events][:3] == [
            "RunContinued",
            "ToolCallStarted",
            "ToolCallCompleted",
        ]
        assert "declined" in events[2].tool.error and events[-1].content == "Kept it."
        assert victim.exists()
        assert agent.get_run_output(paused.run_id).status == "completed"


def test_a_paused_stream_ends_with_a_paused_event(rt, tmp_path):
    model = TestModel([{"tool_calls": [call("delete_file", path="/nonexistent")]}])
    with Agent(rt, model, db=SqliteDb(db_file=tmp_path / "e.db"), tools=[delete_file]) as agent:
        events = list(agent.run("Delete it", stream=True))
        assert len(events) == 1 and isinstance(events[-1], RunPausedEvent)
        assert events[-1].requirements[0].tool_call.name == "delete_file"
        assert agent.get_run_output(events[-1].run_id).status == "paused"


# -- over ferrule serve ------------------------------------------------------------------------


def test_an_agent_over_ferrule_serve_keeps_its_sessions_on_the_server(tmp_path, monkeypatch):
    monkeypatch.setenv(STORAGE_DIR_ENV, str(tmp_path))
    kernel = new_kernel()
    model = TestModel(["Noted: blue.", "Your favorite color is blue."])
    with ServerThread(kernel) as url, Runtime(url=url) as remote:
        with Agent(
            remote,
            model,
            db=SqliteDb(store="served.db"),
            session_id="user-123",
            add_history_to_context=True,
        ) as agent:
            agent.run("My favorite color is blue")
            output = agent.run("What is my favorite color?")
            assert output.content == "Your favorite color is blue."
            received = kernel.component(agent._component).requests[-1].messages
            assert texts(received) == [
                ("user", "My favorite color is blue"),
                ("assistant", "Noted: blue."),
                ("user", "What is my favorite color?"),
            ]
            assert len(agent.get_session().runs) == 2
            (storage,) = [n for n in kernel.components() if n.startswith("db-")]
        assert storage not in kernel.components()  # deleted with the agent
    assert (tmp_path / "served.db").is_file()


def test_a_db_names_a_storage_component_already_defined(rt, tmp_path):
    rt.define("sqlite_storage", "shared-db", {"path": str(tmp_path / "shared.db")})
    try:
        with Agent(rt, TestModel(["a"]), db="shared-db", session_id="x") as agent:
            agent.run("hi")
        # the agent does not delete a component it did not define
        assert rt.call_method("shared-db", "get_session", {"session_id": "x"})["session"]
    finally:
        rt.delete("shared-db")
