"""Agno's ``Agent(store_events=True, events_to_skip=[...])``: a streamed run keeps the
events it streamed (but the skipped ones: the content deltas by default) in
``RunOutput.events``, stored with the run in SQLite and read back as events; and
``debug_level=2``, the debug log showing what each model request sends and the reply's
text. The model is the scripted test model."""

from __future__ import annotations

import logging

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.run.agent import RunCompletedEvent, RunEvent, RunStartedEvent
from ferrule.tools import tool
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def script() -> TestModel:
    return TestModel([{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "3"])


def test_a_streamed_run_keeps_its_events_but_the_content_deltas(rt, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "agno.db"))
    with Agent(rt, model=script(), tools=[add], db=db, store_events=True) as agent:
        assert agent.events_to_skip == [RunEvent.run_content]
        streamed = list(agent.run("1 + 2?", stream=True, stream_events=True))
        completed = streamed[-1]
        assert isinstance(completed, RunCompletedEvent)
        output = agent.get_last_run_output()
    assert output is not None and output.events is not None
    kinds = [e.event for e in output.events]
    assert "RunContent" not in kinds
    assert kinds[0] == "RunStarted" and isinstance(output.events[0], RunStartedEvent)
    assert kinds.count("ToolCallStarted") == kinds.count("ToolCallCompleted") == 1
    assert kinds.count("ModelRequestStarted") == 2
    # everything streamed but the deltas, up to the completion (told after the run is stored)
    expected = [e.event for e in streamed if e.event not in ("RunContent", "RunCompleted")]
    assert kinds == expected
    assert output.events[0].run_id == completed.run_id


def test_events_to_skip_names_the_events_not_kept(rt):
    skip = [RunEvent.model_request_started, "ModelRequestCompleted"]
    with Agent(rt, model=script(), tools=[add], store_events=True, events_to_skip=skip) as agent:
        stream = agent.run("1 + 2?", stream=True, stream_events=True, yield_run_output=True)
        output = list(stream)[-1]
    kinds = [e.event for e in output.events]
    assert "RunContent" in kinds  # only the named ones are skipped now
    assert not {"ModelRequestStarted", "ModelRequestCompleted"} & set(kinds)


def test_without_store_events_no_events_are_kept(rt):
    with Agent(rt, model=TestModel(["Hi.", "Hi."])) as agent:
        assert agent.store_events is False
        stream = agent.run("Hi", stream=True, stream_events=True, yield_run_output=True)
        assert list(stream)[-1].events is None
        assert agent.run("Hi").events is None


def test_bad_event_settings_are_refused_naming_the_option(rt):
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=TestModel(["x"]), store_events="yes")
    assert caught.value.errors[0]["path"] == "store_events"
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=TestModel(["x"]), events_to_skip=["RunContent", "NoSuchEvent"])
    assert caught.value.errors[0]["path"] == "events_to_skip[1]"
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=TestModel(["x"]), events_to_skip="RunContent")
    assert caught.value.errors[0]["path"] == "events_to_skip"


def test_debug_level_two_logs_what_the_model_is_sent_and_says(rt, caplog):
    caplog.set_level(logging.DEBUG, logger="ferrule")
    with Agent(rt, model=TestModel(["Four."]), debug_mode=True, debug_level=2) as agent:
        agent.run("What is 2 + 2?")
    events = [r.getMessage() for r in caplog.records if r.name == "ferrule.agent"]
    request = next(e for e in events if e.startswith("model_request"))
    response = next(e for e in events if e.startswith("model_response"))
    assert "user: What is 2 + 2?" in request and "Four." in response
    caplog.clear()
    with Agent(rt, model=TestModel(["Four."]), debug_mode=True) as agent:
        assert agent.debug_level == 1
        agent.run("What is 2 + 2?")
    events = [r.getMessage() for r in caplog.records if r.name == "ferrule.agent"]
    assert events and not any("What is 2 + 2?" in e or "Four." in e for e in events)
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=TestModel(["x"]), debug_level=3)
    assert caught.value.errors[0]["path"] == "debug_level"
