"""Agno's run events (``agno.run.agent``) as ferrule's turn loop streams them with
``stream=True, stream_events=True``: each event where ferrule does that step, in Agno's
order, with Agno's field values. The model is OpenAI's wire on the loopback server
(`wire`: conftest) or the scripted test model; memories and summaries are stored in
SQLite."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import (
    RUN_EVENT_TYPE_REGISTRY,
    MemoryUpdateCompletedEvent,
    ModelRequestCompletedEvent,
    ModelRequestStartedEvent,
    PreHookCompletedEvent,
    PreHookStartedEvent,
    ReasoningCompletedEvent,
    RunCancelledEvent,
    RunCompletedEvent,
    RunContentEvent,
    RunErrorEvent,
    RunEvent,
    RunInput,
    RunPausedEvent,
    RunStartedEvent,
    SessionSummaryCompletedEvent,
    ToolCallCompletedEvent,
    ToolCallErrorEvent,
    run_output_event_from_dict,
)
from ferrule.run.base import BaseRunOutputEvent
from ferrule.tools import tool
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


def names(events: list[Any]) -> list[str]:
    """The events' names, a run of RunContent pieces said once."""
    out: list[str] = []
    for event in events:
        if not (event.event == "RunContent" and out and out[-1] == "RunContent"):
            out.append(event.event)
    return out


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


def test_a_run_with_hooks_and_a_tool_streams_agnos_events_in_agnos_order(wire):
    seen_inputs: list[str] = []

    def polite(run_input: RunInput) -> None:
        seen_inputs.append(run_input.input_content_string())

    def audit(run_output: Any) -> None:
        pass

    wire.calls("add", a=2, b=3)
    wire.says("It is 5.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o-mini"),
        name="Calculator",
        tools=[add],
        pre_hooks=[polite],
        post_hooks=[audit],
    )
    events = list(agent.run("What is 2+3?", stream=True, stream_events=True))
    agent.delete()
    assert names(events) == [
        "PreHookStarted",
        "PreHookCompleted",
        "RunStarted",
        "ModelRequestStarted",
        "ModelRequestCompleted",
        "ToolCallStarted",
        "ToolCallCompleted",
        "ModelRequestStarted",
        "RunContent",
        "ModelRequestCompleted",
        "RunContentCompleted",
        "PostHookStarted",
        "PostHookCompleted",
        "RunCompleted",
    ]
    pre, pre_done, started = events[:3]
    assert isinstance(pre, PreHookStartedEvent) and pre.pre_hook_name == "polite"
    assert isinstance(pre_done, PreHookCompletedEvent)
    assert pre_done.run_input.input_content == "What is 2+3?" and seen_inputs == ["What is 2+3?"]
    assert isinstance(started, RunStartedEvent)
    assert (started.model, started.model_provider) == ("gpt-4o-mini", "OpenAI")
    assert started.agent_name == "Calculator" and started.agent_id == agent.id
    request, reply = events[3], events[4]
    assert isinstance(request, ModelRequestStartedEvent) and request.model == "gpt-4o-mini"
    assert isinstance(reply, ModelRequestCompletedEvent)
    assert reply.input_tokens and reply.output_tokens
    assert reply.total_tokens == reply.input_tokens + reply.output_tokens
    assert reply.time_to_first_token is not None
    done = next(e for e in events if isinstance(e, ToolCallCompletedEvent))
    assert (done.tool.tool_name, done.tool.tool_args, done.tool.result) == (
        "add",
        {"a": 2, "b": 3},
        5,
    )
    assert done.content == "5"
    hooks = [e.post_hook_name for e in events if e.event.startswith("PostHook")]
    assert hooks == ["audit", "audit"]
    completed = events[-1]
    assert isinstance(completed, RunCompletedEvent) and completed.content == "It is 5."
    assert completed.metrics is not None and len(completed.metrics.model_calls) == 2
    assert {e.run_id for e in events} == {started.run_id}
    assert all(e.event == RunEvent(e.event) for e in events)


def test_without_stream_events_only_the_content_comes(rt):
    with Agent(
        rt,
        TestModel([{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}, "2."]),
        tools=[add],
    ) as agent:
        events = list(agent.run("1+1?", stream=True))
    assert {type(e) for e in events} == {RunContentEvent}
    assert "".join(e.content for e in events) == "2."


def test_a_failing_tool_is_completed_then_reported_as_an_error(rt):
    model = TestModel([{"tool_calls": [{"name": "divide", "arguments": {"a": 1, "b": 0}}]}, "No."])
    with Agent(rt, model, tools=[divide]) as agent:
        events = list(agent.run("1/0?", stream=True, stream_events=True))
    kinds = names(events)
    at = kinds.index("ToolCallCompleted")
    assert kinds[at : at + 2] == ["ToolCallCompleted", "ToolCallError"]
    error = next(e for e in events if isinstance(e, ToolCallErrorEvent))
    assert error.tool.tool_name == "divide" and "division by zero" in error.error
    assert error.tool is next(e for e in events if isinstance(e, ToolCallCompletedEvent)).tool


def test_a_reasoning_model_streams_reasoning_events_before_the_answer(rt):
    thinker = TestModel([{"text": "", "reasoning": ["Paris is ", "the capital."]}])
    with Agent(rt, TestModel(["Paris."]), reasoning_model=thinker) as agent:
        events = list(agent.run("Capital of France?", stream=True, stream_events=True))
    assert names(events)[:5] == [
        "RunStarted",
        "ReasoningStarted",
        "ReasoningContentDelta",
        "ReasoningContentDelta",
        "ReasoningCompleted",
    ]
    deltas = [e.reasoning_content for e in events if e.event == "ReasoningContentDelta"]
    assert deltas == ["Paris is ", "the capital."]
    completed = next(e for e in events if isinstance(e, ReasoningCompletedEvent))
    assert completed.content == "Paris is the capital." and completed.content_type == "str"


def test_a_parser_model_is_announced_before_the_content_completes(rt):
    from pydantic import BaseModel

    class Review(BaseModel):
        title: str
        rating: int

    parser = TestModel([{"output": {"title": "Inception", "rating": 9}}])
    main = TestModel(["Inception: 9 out of 10."])
    with Agent(rt, main, output_schema=Review, parser_model=parser) as agent:
        events = list(agent.run("Review Inception", stream=True, stream_events=True))
    assert names(events)[-4:] == [
        "ParserModelResponseStarted",
        "ParserModelResponseCompleted",
        "RunContentCompleted",
        "RunCompleted",
    ]
    assert events[-1].content == Review(title="Inception", rating=9)


def test_memories_and_the_summary_are_updated_after_the_content(rt, tmp_path):
    model = TestModel(
        [
            "Nice to meet you, Bo.",
            {"tool_calls": [{"name": "add_memory", "arguments": {"memory": "The user is Bo"}}]},
            "done",
            {"output": {"summary": "Bo introduced himself.", "topics": ["intro"]}},
        ]
    )
    db = SqliteDb(db_file=tmp_path / "m.db")
    with Agent(
        rt, model, db=db, user_id="bo", enable_user_memories=True, enable_session_summaries=True
    ) as agent:
        events = list(agent.run("I am Bo", stream=True, stream_events=True))
    assert names(events)[-6:] == [
        "RunContentCompleted",
        "MemoryUpdateStarted",
        "MemoryUpdateCompleted",
        "SessionSummaryStarted",
        "SessionSummaryCompleted",
        "RunCompleted",
    ]
    memories = next(e for e in events if isinstance(e, MemoryUpdateCompletedEvent)).memories
    assert [m.memory for m in memories] == ["The user is Bo"]
    summary = next(e for e in events if isinstance(e, SessionSummaryCompletedEvent))
    assert summary.session_summary.summary == "Bo introduced himself."


@tool(requires_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def test_a_paused_run_pauses_and_continues_with_agnos_events(rt):
    model = TestModel(
        [{"tool_calls": [{"name": "delete_file", "arguments": {"path": "a"}}]}, "Kept."]
    )
    with Agent(rt, model, tools=[delete_file]) as agent:
        events = list(agent.run("Delete a", stream=True, stream_events=True))
        paused = events[-1]
        assert isinstance(paused, RunPausedEvent) and paused.is_paused
        assert [t.tool_name for t in paused.tools] == ["delete_file"]
        assert paused.active_requirements == paused.requirements
        paused.requirements[0].reject("not today")
        assert paused.active_requirements == []
        resumed = list(
            agent.continue_run(paused.run_id, paused.requirements, stream=True, stream_events=True)
        )
    assert names(resumed)[:3] == ["RunContinued", "ToolCallStarted", "ToolCallCompleted"]
    assert resumed[0].run_id == paused.run_id and resumed[-1].content == "Kept."


def test_a_cancelled_run_ends_with_run_cancelled(rt):
    slow = TestModel([{"text": "one two three four five six", "delay": 0.2}])
    with Agent(rt, slow) as agent:
        stream = agent.run("go", stream=True, stream_events=True)
        timer = threading.Timer(0.5, lambda: Agent.cancel_run(stream.run_id))
        timer.start()
        events = list(stream)
        timer.join()
    last = events[-1]
    assert isinstance(last, RunCancelledEvent) and last.is_cancelled and not last.is_paused
    assert last.reason and "cancelled" in last.reason
    assert not any(isinstance(e, RunErrorEvent) for e in events)


def test_a_failed_run_says_its_error_kind(rt):
    with Agent(rt, TestModel([{"error": "the backend fell over"}])) as agent:
        events = list(agent.run("hi", stream=True, stream_events=True))
    error = events[-1]
    assert isinstance(error, RunErrorEvent) and "the backend fell over" in error.content
    assert (
        error.error_type == error.error.kind and error.additional_data["kind"] == error.error_type
    )


def test_events_round_trip_through_their_dicts():
    event = ModelRequestCompletedEvent(run_id="r1", agent_name="A", input_tokens=3)
    data = event.to_dict()
    assert data["event"] == "ModelRequestCompleted" and "output_tokens" not in data
    again = run_output_event_from_dict(data)
    assert isinstance(again, ModelRequestCompletedEvent) and again == event
    assert isinstance(again, BaseRunOutputEvent)
    assert '"input_tokens": 3' in event.to_json()
    assert RUN_EVENT_TYPE_REGISTRY["RunCancelled"] is RunCancelledEvent
    assert RunCancelledEvent.event == RunEvent.run_cancelled == "RunCancelled"
    with pytest.raises(InvalidInputError, match="unknown event 'Nope'") as raised:
        run_output_event_from_dict({"event": "Nope"})
    assert raised.value.details["errors"][0]["path"] == "event"
