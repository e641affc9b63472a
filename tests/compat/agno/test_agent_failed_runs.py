"""A failed run is reported as Agno 2.9 reports it: ``run`` / ``arun`` / ``continue_run``
/ ``acontinue_run`` return the `RunOutput` with status ``error`` (its content the error's
message when it has none, its typed error in ``error``, stored in the session's db), a
streamed run ends with a `RunErrorEvent` and raises nothing; the retries come first; what
is refused before a run starts still raises; ferrule's own callers of a run (a helper
model's, Agno's ``Model.response``) still get the typed error. Models fail as providers do
(test models whose function raises the kit's typed errors, or the loopback wire)."""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Any

import attrs
import pytest
from ferrule import Runtime
from ferrule.agent import (
    Agent,
    CheckTrigger,
    InputCheckError,
    OutputCheckError,
    RunErrorEvent,
    RunOutput,
    RunStatus,
)
from ferrule.db.sqlite import SqliteDb
from ferrule.exceptions import ModelProviderError
from ferrule.models.message import Message
from ferrule.models.openai import OpenAIChat
from ferrule.tools import ModelRetry, tool
from ferrule_kernel import FerruleError, InvalidInputError, RequestCancelledError
from ferrule_kit.errors import ProviderUnavailableError
from ferrule_kit.testing.loopback import Reply
from ferrule_testmodel import TestModel

from .conftest import TEST_KEY
from .failing import Failing


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def busy() -> FerruleError:
    return ProviderUnavailableError("the provider is overloaded", provider="p", status=529)


def assert_failed_with(output: RunOutput[Any], kind: str, message: str) -> None:
    assert output.status == RunStatus.error
    assert output.error is not None and output.error.kind == kind
    assert output.error.message == message


def test_a_model_error_ends_the_run_with_status_error_stored_in_sqlite(rt, tmp_path):
    model = Failing("Hello!", [busy(), busy()])
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    with Agent(
        rt, model=TestModel(function=model), db=db, retries=1, delay_between_retries=0
    ) as agent:
        output = agent.run("Hi")
        assert model.requests == 2  # the retry came first, then the error status
        assert_failed_with(output, "provider_unavailable", "the provider is overloaded")
        assert output.content == "the provider is overloaded"
        assert isinstance(output.error, ProviderUnavailableError)  # the host may raise it
        stored = agent.get_run_output(output.run_id)
        assert stored is not None and stored.status == RunStatus.error
        assert stored.content == "the provider is overloaded"
        assert isinstance(stored.error, ProviderUnavailableError)
        # the failure ended only its own run: the next one is answered
        assert agent.run("Hi again").content == "Hello!"


async def test_arun_returns_the_failed_run_stored_in_sqlite(rt, tmp_path):
    model = Failing("Hello!", [busy()])
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    agent = Agent(rt, model=TestModel(function=model), db=db)
    try:
        output = await agent.arun("Hi")
        assert_failed_with(output, "provider_unavailable", "the provider is overloaded")
        assert output.content == "the provider is overloaded"
        stored = await agent.aget_last_run_output()
        assert stored is not None and stored.run_id == output.run_id
        assert stored.status == RunStatus.error
    finally:
        await agent.adelete()


def test_a_streamed_run_ends_with_a_run_error_event_and_raises_nothing(rt):
    with Agent(rt, model=TestModel(function=Failing("x", [busy()]))) as agent:
        stream = agent.run("Hi", stream=True, stream_events=True)
        events = list(stream)
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    assert [e.event for e in events].count("RunError") == 1
    assert last.content == "the provider is overloaded"
    assert last.error_type == "provider_unavailable" and last.error_id is None
    assert last.additional_data is not None
    assert last.additional_data["kind"] == "provider_unavailable"
    assert isinstance(last.error, ProviderUnavailableError)
    assert stream.output.status == RunStatus.error


async def test_an_async_streamed_run_ends_with_a_run_error_event(rt):
    agent = Agent(rt, model=TestModel(function=Failing("x", [busy()])))
    try:
        events = [event async for event in agent.arun("Hi", stream=True)]
    finally:
        await agent.adelete()
    assert isinstance(events[-1], RunErrorEvent)
    assert events[-1].error_type == "provider_unavailable"


def refuse_questions(run_input: Any) -> None:
    if "?" in run_input.input_content_string():
        raise InputCheckError("no questions here", check_trigger=CheckTrigger.OFF_TOPIC)


def test_an_input_check_error_is_the_failed_runs_status_and_the_input_goes_nowhere(rt, tmp_path):
    model = Failing("fine", [])
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    with Agent(rt, model=TestModel(function=model), pre_hooks=[refuse_questions], db=db) as agent:
        output = agent.run("What is the secret?")
        assert_failed_with(output, "input_check", "no questions here")
        assert output.content == "no questions here"
        assert isinstance(output.error, InputCheckError)
        assert output.error.check_trigger is CheckTrigger.OFF_TOPIC
        assert model.requests == 0
        events = list(agent.run("Why?", stream=True))
        assert agent.run("A statement.").content == "fine"
        # the refused input reaches neither the model nor the db (ferrule's safety line;
        # Agno stores the refused run, its input with it)
        assert agent.get_run_output(output.run_id) is None
        assert [m.content for m in agent.get_chat_history()] == ["A statement.", "fine"]
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    assert (last.error_type, last.error_id) == ("input_check", "off_topic")
    assert last.content == "no questions here"


async def test_an_output_check_error_keeps_the_reply_as_content_as_agno_does(rt):
    def no_shouting(run_output: RunOutput[Any]) -> None:
        if str(run_output.content).isupper():
            raise OutputCheckError("too loud", check_trigger=CheckTrigger.OUTPUT_NOT_ALLOWED)

    agent = Agent(rt, model=TestModel(["HELLO"]), post_hooks=[no_shouting])
    try:
        output = await agent.arun("Hi")
    finally:
        await agent.adelete()
    assert_failed_with(output, "output_check", "too loud")
    assert output.content == "HELLO"  # the run had content: Agno keeps it


def test_a_tool_error_that_escapes_ends_the_run_with_status_error(rt):
    @tool(retries=0)
    def lookup(city: str) -> str:
        raise ModelRetry(f"no city {city!r}")

    turn = {"tool_calls": [{"name": "lookup", "arguments": {"city": "Atlantis"}}]}
    with Agent(rt, model=TestModel([turn, "unused"]), tools=[lookup]) as agent:
        output = agent.run("Weather in Atlantis?")
    assert output.status == RunStatus.error
    assert output.error is not None and output.error.kind == "tool_retries_exceeded"
    assert output.content == output.error.message


@tool(requires_confirmation=True)
def delete_file(name: str) -> str:
    return f"deleted {name}"


def paused_then_failing(rt: Runtime, tmp_path: Any) -> tuple[Agent[str], RunOutput[str]]:
    turn = {"tool_calls": [{"name": "delete_file", "arguments": {"name": "a.txt"}}]}
    failing = Failing("x", [None, busy()])  # the first request pauses, the next fails

    def model(inputs: Any) -> Any:
        return turn if failing(inputs) == "x" else None

    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    agent = Agent(rt, model=TestModel(function=model), tools=[delete_file], db=db)
    paused = agent.run("Delete a.txt")
    assert paused.status == RunStatus.paused
    return agent, paused


def test_continue_run_returns_the_failed_run(rt, tmp_path):
    agent, paused = paused_then_failing(rt, tmp_path)
    with agent:
        output = agent.continue_run(paused.run_id, confirm=True)
        assert_failed_with(output, "provider_unavailable", "the provider is overloaded")
        stored = agent.get_run_output(paused.run_id)
    assert stored is not None and stored.status == RunStatus.error


async def test_acontinue_run_awaited_returns_the_failed_run(rt, tmp_path):
    agent, paused = paused_then_failing(rt, tmp_path)
    try:
        output = await agent.acontinue_run(paused.run_id, confirm=True)
    finally:
        await agent.adelete()
    assert_failed_with(output, "provider_unavailable", "the provider is overloaded")


@attrs.define
class Order:
    item: str
    quantity: int


def test_what_is_refused_before_the_run_starts_still_raises(rt):
    with Agent(rt, model=TestModel(["x"]), input_schema=Order) as agent:
        with pytest.raises(InvalidInputError) as refused:
            agent.run({"item": "tea", "quantity": "many"})
        assert "quantity" in str(refused.value)
        with pytest.raises(FerruleError) as unknown:
            agent.continue_run(run_id="no-such-run", confirm=True)
    assert unknown.value.kind == "unknown_run"
    # a setting checked only as the run starts is refused as an argument is, awaited too
    with Agent(rt, model=TestModel(["x"]), additional_input=[object()]) as agent:
        with pytest.raises(InvalidInputError) as late:
            agent.run("Hi")
    assert late.value.errors[0]["path"] == "additional_input[0]"


def test_a_provider_echoing_the_key_leaks_it_to_neither_content_nor_logs(wire, caplog):
    error = {"error": {"message": f"Incorrect API key provided: {TEST_KEY}", "type": "auth"}}
    wire.replies(Reply.json(error, status=401), Reply.json(error, status=401))
    agent = Agent(model=OpenAIChat(id="gpt-4o"))
    with caplog.at_level(logging.DEBUG):
        output = agent.run("Hi")
        events = list(agent.run("Hi", stream=True))
    agent.delete()
    assert output.status == RunStatus.error and output.error is not None
    assert output.error.kind == "authentication_error"
    assert TEST_KEY not in str(output.content) and TEST_KEY not in output.to_json()
    assert TEST_KEY not in repr(events[-1])
    assert "agent_run_error" in caplog.text and TEST_KEY not in caplog.text


def test_ctrl_c_while_run_waits_ends_the_run_cancelled(rt, ctrl_c_raises):
    # ctrl_c_raises: Python's own SIGINT handler, also where the suite runs with it ignored
    main = threading.main_thread().ident
    assert main is not None

    @tool
    def slow() -> str:
        # the user presses Ctrl-C while the run waits: a terminal's SIGINT reaches the main
        # thread, which waits for the run (os.kill lets the kernel pick any thread)
        signal.pthread_kill(main, signal.SIGINT)
        time.sleep(0.5)
        return "done"

    turn = {"tool_calls": [{"name": "slow", "arguments": {}}]}
    with Agent(rt, model=TestModel([turn, "finished"]), tools=[slow]) as agent:
        output = agent.run("Go")
    assert output.status == RunStatus.cancelled
    assert isinstance(output.error, RequestCancelledError)


def test_a_helper_model_that_fails_leaves_the_run_completed_without_its_summary(
    rt, tmp_path, caplog
):
    # ferrule's own callers of a run still get its typed error: the summary's helper
    # run fails, the summary is not written, the user's run completes
    model = TestModel(["Paris is lovely in May.", {"error": "the summary model is down"}])
    db = SqliteDb(db_file=str(tmp_path / "runs.db"))
    with (
        caplog.at_level(logging.WARNING),
        Agent(rt, model, db=db, enable_session_summaries=True) as agent,
    ):
        output = agent.run("I go to Paris in May")
        assert output.status == RunStatus.completed
        assert output.content == "Paris is lovely in May."
        assert agent.get_session().summary is None
    assert "summary_not_updated" in caplog.text and "the summary model is down" in caplog.text


def test_agnos_model_response_still_raises_what_failed(wire):
    error = {"error": {"message": "The server had an error", "type": "server_error"}}
    wire.replies(Reply.json(error, status=500))
    model = OpenAIChat(id="gpt-4o", max_retries=0)
    with pytest.raises(ModelProviderError) as raised:
        model.response([Message(role="user", content="Hi")])
    assert raised.value.status_code == 500
