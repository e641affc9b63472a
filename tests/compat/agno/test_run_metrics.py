"""A run's metrics in Agno's shape: ``RunOutput.metrics`` is `ferrule.metrics.RunMetrics`,
its totals summed over every model the run used, each model's share in ``details`` under
its model type (``"model"``, ``"memory_model"``, ``"session_summary_model"``, ...) with the
provider and id of that model; what the run's stream ends with, what the db gives back,
the session's metrics, and runs stored before ferrule kept this shape (only its own
``model_calls``). The models speak OpenAI's wire to a loopback server, each reply's usage
scripted."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.memory import MemoryManager
from ferrule.metrics import ModelMetrics, RunMetrics, SessionMetrics
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import RunOutput
from ferrule.session.summary import SessionSummaryManager
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.testing import chat_completions
from ferrule_kit.testing.conformance import ScriptedTurn


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


def usage(prompt: int, completion: int, reasoning: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def says(text: str, prompt: int, completion: int, reasoning: int = 0) -> Any:
    turn = ScriptedTurn(text=(text,))
    return chat_completions.reply(turn, usage=usage(prompt, completion, reasoning))


def calls(name: str, arguments: dict[str, Any], prompt: int, completion: int) -> Any:
    turn = ScriptedTurn(
        tool_calls=(ToolCall("call_1", name, arguments),), finish_reason="tool_calls"
    )
    return chat_completions.reply(turn, usage=usage(prompt, completion))


def tokens(metrics: Any) -> tuple[int, int, int]:
    return (metrics.input_tokens, metrics.output_tokens, metrics.total_tokens)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_runs_metrics_are_agnos_run_metrics_with_the_models_share(rt, wire):
    wire.replies(
        calls("add", {"a": 2, "b": 3}, prompt=30, completion=5),
        says("It is 5.", prompt=50, completion=4, reasoning=2),
    )
    agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[add], runtime=rt)
    output = agent.run("What is 2+3?")
    agent.delete()
    metrics = output.metrics
    assert type(metrics) is RunMetrics
    assert tokens(metrics) == (80, 9, 89) and metrics.reasoning_tokens == 2
    assert metrics.duration is not None and metrics.duration > 0
    assert metrics.time_to_first_token is not None
    assert metrics.time_to_first_token <= metrics.duration
    (share,) = metrics.details["model"]
    assert isinstance(share, ModelMetrics)
    assert (share.provider, share.id) == ("OpenAI", "gpt-4o-mini")
    assert tokens(share) == (80, 9, 89) and share.reasoning_tokens == 2
    # ferrule's own: each call of the model, and the tool calls run
    assert [(c.input_tokens, c.finish_reason) for c in metrics.model_calls] == [
        (30, "tool_calls"),
        (50, "stop"),
    ]
    assert metrics.tool_calls == 1
    # to_dict leaves out what is zero, as Agno's; from_dict reads it back
    data = metrics.to_dict()
    assert "audio_input_tokens" not in data and "timer" not in data
    assert data["details"]["model"] == [
        {
            "input_tokens": 80,
            "output_tokens": 9,
            "total_tokens": 89,
            "reasoning_tokens": 2,
            "id": "gpt-4o-mini",
            "provider": "OpenAI",
        }
    ]
    again = RunMetrics.from_dict(json.loads(json.dumps(data)))
    assert again.details == metrics.details and again.model_calls == metrics.model_calls
    assert RunOutput.from_dict(output.to_dict()).metrics.details == metrics.details


def test_the_streams_run_output_and_completed_event_carry_the_metrics(rt, wire):
    wire.replies(says("1, 2, 3", prompt=12, completion=6))
    agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), runtime=rt)
    events = list(agent.run("Count to 3.", stream=True, stream_events=True, yield_run_output=True))
    agent.delete()
    output = events[-1]
    assert isinstance(output, RunOutput)
    completed = [e for e in events if getattr(e, "event", None) == "RunCompleted"]
    assert [tokens(e.metrics) for e in completed] == [(12, 6, 18)]
    assert tokens(output.metrics) == (12, 6, 18)
    assert output.metrics.details["model"][0].id == "gpt-4o-mini"
    assert output.metrics.time_to_first_token is not None


def test_helper_models_are_counted_under_their_model_type(rt, wire, tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "agent.db"))
    wire.replies(
        says("Hello Alice.", prompt=20, completion=3),  # the agent's model
        calls("add_memory", {"memory": "Alice works at Google"}, prompt=40, completion=8),
        says("done", prompt=60, completion=1),  # the memory model, after its tool
        says('{"summary": "Alice introduced herself.", "topics": ["work"]}', 70, 12),
    )
    agent = Agent(
        model=OpenAIChat(id="gpt-5.1"),
        memory_manager=MemoryManager(model=OpenAIChat(id="gpt-4o-mini"), db=db),
        update_memory_on_run=True,
        session_summary_manager=SessionSummaryManager(model=OpenAIChat(id="gpt-4.1-mini")),
        enable_session_summaries=True,
        db=db,
        user_id="alice",
        runtime=rt,
    )
    output = agent.run("My name is Alice and I work at Google.")
    details = output.metrics.details
    assert sorted(details) == ["memory_model", "model", "session_summary_model"]
    shares = {
        kind: [(m.provider, m.id, tokens(m)) for m in items] for kind, items in details.items()
    }
    assert shares == {
        "model": [("OpenAI", "gpt-5.1", (20, 3, 23))],
        "memory_model": [("OpenAI", "gpt-4o-mini", (100, 9, 109))],
        "session_summary_model": [("OpenAI", "gpt-4.1-mini", (70, 12, 82))],
    }
    assert tokens(output.metrics) == (190, 24, 214)
    # the run's own model calls are the agent model's
    assert [c.input_tokens for c in output.metrics.model_calls] == [20]
    # the stored run, and the session's metrics summed over its runs
    stored = agent.get_last_run_output()
    assert type(stored.metrics) is RunMetrics and stored.metrics.details == details
    assert tokens(stored.metrics) == (190, 24, 214)
    session = agent.get_session_metrics()
    assert isinstance(session, SessionMetrics) and tokens(session) == (190, 24, 214)
    assert session.details["memory_model"][0].id == "gpt-4o-mini"
    agent.delete()


def test_a_run_stored_in_the_old_shape_loads_with_agnos_totals(rt, wire, tmp_path):
    path = tmp_path / "agent.db"
    wire.replies(says("Hi.", prompt=9, completion=2))
    agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), db=SqliteDb(db_file=str(path)), runtime=rt)
    run_id = agent.run("Hello").run_id
    # rewrite the stored metrics as ferrule wrote them before it kept Agno's totals
    old = {
        "model_calls": [
            {
                "input_tokens": 7,
                "output_tokens": 3,
                "reasoning_tokens": 1,
                "latency": 0.5,
                "time_to_first_token": 0.1,
                "finish_reason": "tool_calls",
            },
            {
                "input_tokens": 12,
                "output_tokens": 4,
                "reasoning_tokens": None,
                "latency": 0.25,
                "time_to_first_token": 0.05,
                "finish_reason": "stop",
            },
        ],
        "tool_calls": 1,
        "duration": 1.5,
        "time_to_first_token": 0.2,
    }
    with sqlite3.connect(path) as connection:
        (table,) = [
            name
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if name.endswith("runs")
        ]
        (payload,) = connection.execute(f"SELECT payload FROM {table}").fetchone()
        data = json.loads(payload)
        assert "details" in data["metrics"]  # what this version writes
        data["metrics"] = old
        connection.execute(f"UPDATE {table} SET payload = ?", (json.dumps(data),))
    metrics = agent.get_run_output(run_id).metrics
    assert type(metrics) is RunMetrics
    assert tokens(metrics) == (19, 7, 26) and metrics.reasoning_tokens == 1
    assert (metrics.duration, metrics.time_to_first_token, metrics.tool_calls) == (1.5, 0.2, 1)
    assert [c.finish_reason for c in metrics.model_calls] == ["tool_calls", "stop"]
    assert tokens(agent.get_session_metrics()) == (19, 7, 26)
    agent.delete()


def test_metrics_of_old_and_new_shape_read_from_dicts():
    assert tokens(RunMetrics.from_dict({})) == (0, 0, 0)
    assert RunMetrics.from_dict({}).model_calls == []
    # given totals win over the calls' sum (a run whose helper models added to them)
    given = RunMetrics.from_dict(
        {"input_tokens": 50, "output_tokens": 5, "model_calls": [{"input_tokens": 10}]}
    )
    assert tokens(given) == (50, 5, 0) and given.model_calls[0].input_tokens == 10
    # a call's unknown keys are ignored, as Agno ignores a dict's
    (call,) = RunMetrics.from_dict({"model_calls": [{"input_tokens": 2, "x": 1}]}).model_calls
    assert call.input_tokens == 2
    summed = RunMetrics(input_tokens=1, tool_calls=1) + RunMetrics(input_tokens=2, tool_calls=2)
    assert (summed.input_tokens, summed.tool_calls) == (3, 3)
