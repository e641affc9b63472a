"""The turn loop's named steps, each alone (`ferrule.agent.loop` and
`ferrule.agent.tool_execution`): what each does to a run, over a real agent's `RunDeps`
and `RunState` and a sink that records what it is told. How they go together is the
agent tests' (test_agent.py, test_agent_tools.py...)."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest
from ferrule import Agent, Runtime, Tool, tool
from ferrule.agent import OutputValidationError, ToolConfirmation
from ferrule.agent.loop import (
    distinct_call_ids,
    exceeds_tool_call_limit,
    fail,
    reply,
    settle,
    tool_call_limit_error,
    waiting_calls,
)
from ferrule.agent.request import INPUT, RunRequest
from ferrule.agent.sinks import END, Channel, Sink
from ferrule.agent.tool_execution import (
    GOES_ON,
    CallOutcome,
    decide,
    decisions_for,
    outcome_of,
    record,
    within,
)
from ferrule.exceptions import RetryAgentRun, StopAgentRun
from ferrule.tools import ModelRetry, ToolError, ToolRetriesExceededError
from ferrule_kernel import FerruleError, InvalidInputError, RequestCancelledError
from ferrule_kit.content.messages import Message, ToolCall
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


@pytest.fixture
def agent(rt):
    with Agent(rt, TestModel(), output_schema={"type": "object"}) as made:
        yield made


class Recorded(Sink):
    """A sink that keeps what it is told."""

    def __init__(self, run: Any) -> None:
        super().__init__(Channel(asyncio.new_event_loop()), run)
        self.told: list[tuple[str, Any]] = []

    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None:
        self.told.append(("tool_result", (message.tool_call_id, name, result, error)))

    def failed(self, error: FerruleError) -> None:
        self.told.append(("failed", error))


def new_run(agent: Agent[Any], **options: Any) -> Any:
    return agent._agent_runs().new_run(RunRequest(kind=INPUT, input="hi", **options))


def calls(*ids_and_names: tuple[str, str]) -> list[ToolCall]:
    return [ToolCall(id, name, {}) for id, name in ids_and_names]


@tool(requires_confirmation=True)
def wire(amount: int) -> str:
    """Wire money."""
    return str(amount)


def look(query: str) -> str:
    """Look something up."""
    return query


# -- the model's turn ------------------------------------------------------------------------


def test_distinct_call_ids_renames_only_a_repeated_id():
    unique = Message("assistant", tool_calls=calls(("a", "x"), ("b", "x")))
    assert distinct_call_ids(unique) is unique
    repeated = Message("assistant", tool_calls=calls(("dup", "x"), ("dup", "y"), ("dup", "z")))
    assert [c.id for c in distinct_call_ids(repeated).tool_calls] == ["dup", "dup-2", "dup-3"]
    # a name another call of the turn carries is not taken
    taken = Message("assistant", tool_calls=calls(("dup", "x"), ("dup", "y"), ("dup-2", "z")))
    assert [c.id for c in distinct_call_ids(taken).tool_calls] == ["dup", "dup-3", "dup-2"]
    assert [c.name for c in distinct_call_ids(taken).tool_calls] == ["x", "y", "z"]


def test_waiting_calls_are_the_calls_whose_tools_pause_in_order():
    tools = {"wire": wire, "look": Tool.from_function(look)}
    turn = [
        ToolCall("1", "look", {}),
        ToolCall("2", "wire", {"amount": 1}),
        ToolCall("3", "wire", {}),
    ]
    waiting = waiting_calls(turn, tools)
    assert [r.tool_call.id for r in waiting] == ["2", "3"]
    assert all(r.confirmed is None for r in waiting)
    assert waiting_calls([ToolCall("4", "unknown", {})], tools) == []


def test_the_tool_call_limit_counts_the_calls_made_and_asked(agent):
    run = new_run(agent, tool_call_limit=2)
    run.tool_calls_made = 1
    assert not exceeds_tool_call_limit(run, calls(("a", "x")))
    assert exceeds_tool_call_limit(run, calls(("a", "x"), ("b", "y")))
    error = tool_call_limit_error(run, calls(("a", "x"), ("b", "y")))
    assert error.details == {"limit": 2, "requested": ["x", "y"]}
    assert not exceeds_tool_call_limit(new_run(agent), calls(("a", "x")) * 50)


def test_reply_parses_the_output_or_asks_again_while_retries_last(agent):
    deps = agent._deps()
    run = new_run(agent)
    sink = Recorded(run)
    assert asyncio.run(reply(deps, run, sink, Message("assistant", '{"a": 1}'), 1))
    assert run.content == {"a": 1}
    before = len(run.messages)
    assert not asyncio.run(reply(deps, run, sink, Message("assistant", "not JSON"), 1))
    assert run.messages[before:][0].role == "user" and "not valid" in run.messages[-1].text
    with pytest.raises(OutputValidationError):
        asyncio.run(reply(deps, run, sink, Message("assistant", "not JSON"), 0))
    text_run = new_run(agent, output_schema=None)
    text_run.output = None
    text_run.shown = ["shown first"]
    assert asyncio.run(reply(deps, text_run, sink, Message("assistant", "then this"), 0))
    assert text_run.content == "shown first\nthen this"


# -- the end of a run ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raised", "status", "kind"),
    [
        (asyncio.CancelledError(), "cancelled", RequestCancelledError),
        (InvalidInputError("bad", field="x"), "error", InvalidInputError),
        (ZeroDivisionError("a bug"), "error", FerruleError),
    ],
)
def test_fail_ends_the_run_with_one_typed_error(agent, raised, status, kind):
    run = new_run(agent)
    sink = Recorded(run)
    asyncio.run(fail(agent._deps(), run, sink, raised))
    assert run.status == status and isinstance(run.error, kind)
    assert sink.told == [("failed", run.error)]
    if isinstance(raised, ZeroDivisionError):
        assert "ZeroDivisionError: a bug" in run.error.message


def test_fail_leaves_an_interrupt_to_the_caller(agent):
    run = new_run(agent)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(fail(agent._deps(), run, Recorded(run), KeyboardInterrupt()))


def test_settle_keeps_a_paused_run_for_continue_run_and_ends_the_stream(agent):
    deps = agent._deps()
    for status, kept in (("paused", True), ("completed", False)):
        run = new_run(agent)
        deps.runs[run.id] = run
        run.status = status
        sink = Recorded(run)
        settle(deps, run, None, sink)
        assert (run.id in deps.runs) is kept
        assert sink.channel.items[-1] is END and run.metrics.duration > 0


# -- tool calls ------------------------------------------------------------------------------


def test_decisions_pair_with_the_calls_that_waited_by_their_place():
    turn = calls(("1", "look"), ("2", "wire"), ("3", "wire"))
    second, third = ToolConfirmation(turn[1]), ToolConfirmation(turn[2])
    assert decisions_for(turn, [second, third]) == [None, second, third]
    assert decisions_for(turn, []) == [None, None, None]


def test_decide_refuses_runs_outside_or_fills_in_the_users_input():
    call = ToolCall("1", "wire", {"amount": 5})
    assert decide(call, None) is call
    with pytest.raises(ToolError, match="declined this tool call: too much"):
        decide(call, ToolConfirmation(call).reject("too much"))
    outside = ToolConfirmation(call, external_execution=True).set_external_execution_result(
        {"ok": True}
    )
    assert decide(call, outside) == CallOutcome({"ok": True}, None, '{"ok": true}')
    assert decide(call, ToolConfirmation(call).confirm()) is call


def test_within_times_out_only_the_work_it_was_given():
    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    async def own_timeout() -> str:
        raise TimeoutError("upstream")

    async def quick() -> str:
        return "done"

    with pytest.raises(ToolError, match=r"'slow' did not finish within 0\.05 s"):
        asyncio.run(within(slow(), 0.05, "slow"))
    with pytest.raises(TimeoutError, match="upstream"):
        asyncio.run(within(own_timeout(), 5, "mine"))
    with pytest.raises(TimeoutError, match="upstream"):
        asyncio.run(within(own_timeout(), None, "mine"))
    assert asyncio.run(within(quick(), None, "quick")) == "done"


def test_outcome_of_each_way_a_tool_ends(agent):
    run = new_run(agent)
    call = ToolCall("1", "look", {})
    lookup = attrs.evolve(Tool.from_function(look), retries=1)
    stopped = outcome_of(StopAgentRun("enough", user_message="bye"), run, call, lookup)
    assert (stopped.stop, stopped.text, [m.text for m in stopped.added]) == (
        "enough",
        "enough",
        ["bye"],
    )
    again = outcome_of(RetryAgentRun("try again"), run, call, lookup)
    assert (again.error, again.stop) == ("try again", GOES_ON)
    assert outcome_of(ModelRetry("fix it"), run, call, lookup).exceeded is None
    past = outcome_of(ModelRetry("fix it"), run, call, lookup)
    assert isinstance(past.exceeded, ToolRetriesExceededError) and run.retries == {"look": 2}
    typed = outcome_of(InvalidInputError("bad", field="q"), run, call, lookup)
    assert typed.error == "invalid_input: bad" and typed.text == '{"error": "invalid_input: bad"}'
    assert outcome_of(ValueError("x"), run, call, lookup).error == "ValueError: x"


def test_record_joins_the_results_in_the_calls_order(agent):
    run = new_run(agent)
    sink = Recorded(run)
    turn = calls(("1", "look"), ("2", "look"))
    outcomes = [
        CallOutcome("a", None, "a", seconds=0.1, added=[Message("user", "after all")]),
        CallOutcome.failed("broke"),
    ]
    run.requirements = [ToolConfirmation(turn[0])]
    record(agent._deps(), run, turn, outcomes, sink)
    tail = run.messages[-3:]
    assert [(m.role, m.tool_call_id) for m in tail] == [
        ("tool", "1"),
        ("tool", "2"),
        ("user", None),
    ]
    assert [e.error for e in run.executions] == [None, "broke"]
    assert sink.told == [
        ("tool_result", ("1", "look", "a", None)),
        ("tool_result", ("2", "look", None, "broke")),
    ]
    assert run.requirements == [] and run.metrics.tool_calls == 2
