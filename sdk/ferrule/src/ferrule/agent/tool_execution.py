"""How one model turn's tool calls run (`execute_tools`), in named steps, each testable
alone: `decide` (what the caller decided for a call that waited: declined, run outside
the agent, or run with the user's input), `invoke` (the tool under its timeout and tool
hooks), `outcome_of` (what each way a tool can end means for the run), and `record` (the
results joined to the run in the calls' order, and told to the sink). One `CallOutcome`
per call carries what happened, in the calls' order: nothing here is keyed by the ids the
model gave its calls (a model may repeat one).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Awaitable
from typing import Any

import attrs
from ferrule_kernel import FerruleError, get_logger
from ferrule_kit.content.messages import Message, ToolCall
from ferrule_kit.stores.storage import ToolExecution

from ..exceptions import AgentRunException, RetryAgentRun, StopAgentRun
from ..tools import (
    ModelRetry,
    Tool,
    ToolContext,
    ToolError,
    ToolRetriesExceededError,
    result_text,
)
from .deps import RunDeps
from .events import CustomEvent
from .hooks import call_tool
from .inputs import as_message, run_context_of
from .results import ToolConfirmation
from .sinks import Sink
from .state import RunState
from .tool_yields import Yielded, drained, is_yielding

log = get_logger("ferrule.agent")

#: A `CallOutcome.stop` when the call does not end the run.
GOES_ON = object()


@attrs.define
class CallOutcome:
    """What one tool call came to: the value the run records (``result``), the error the
    model is told (``error``), the text the model reads (``text``)."""

    result: Any = None
    error: str | None = None
    text: str = ""
    seconds: float = 0.0
    #: It ends the run: None (``stop_after_tool_call``) or a `StopAgentRun`'s message.
    stop: Any = GOES_ON
    #: Messages its `RetryAgentRun` / `StopAgentRun` adds after every result.
    added: list[Message] = attrs.Factory(list)
    #: Its result, when its tool shows it before the reply (``show_result``).
    shown: str | None = None
    #: The run must stop: the tool asked the model to retry more often than it may.
    exceeded: ToolRetriesExceededError | None = None
    #: The `CustomEvent`s a generator tool yielded, streamed before its result.
    events: list[CustomEvent] = attrs.Factory(list)

    @classmethod
    def failed(cls, error: str) -> CallOutcome:
        return cls(error=error, text=json.dumps({"error": error}, ensure_ascii=False))


async def execute_tools(
    deps: RunDeps, run: RunState, calls: list[ToolCall], tools: dict[str, Tool], sink: Sink
) -> bool:
    """Run the calls concurrently; results are recorded in the calls' order. True when the
    run ends here (a tool with ``stop_after_tool_call``, or one that raised
    `StopAgentRun`): its content is then what those tools returned."""
    # the paused turn's decisions, by the call's place in the turn (its requirement's)
    decisions = decisions_for(calls, run.requirements)
    sink.tools_started(calls)
    running = [
        traced(deps, run, call, tools, decision)
        for call, decision in zip(calls, decisions, strict=True)
    ]
    outcomes = await asyncio.gather(*running)
    exceeded = [o.exceeded for o in outcomes if o.exceeded is not None]
    if exceeded:
        raise exceeded[0]
    record(deps, run, calls, outcomes, sink)
    stops = [o.stop for o in outcomes if o.stop is not GOES_ON]
    if not stops:
        return False
    # a StopAgentRun's message is in the content: it says why the run ended
    run.content = "\n".join([*run.shown, *(s for s in stops if s is not None)])
    return True


def decisions_for(
    calls: list[ToolCall], requirements: list[ToolConfirmation]
) -> list[ToolConfirmation | None]:
    """Each call's decision: the requirement made for it when the turn paused (the calls
    that waited, in order, are the requirements, in order)."""
    waiting = iter(requirements)
    decided: list[ToolConfirmation | None] = []
    upcoming = next(waiting, None)
    for call in calls:
        if upcoming is not None and upcoming.tool_call.id == call.id:
            decided.append(upcoming)
            upcoming = next(waiting, None)
        else:
            decided.append(None)
    return decided


async def traced(
    deps: RunDeps,
    run: RunState,
    call: ToolCall,
    tools: dict[str, Tool],
    decision: ToolConfirmation | None,
) -> CallOutcome:
    """`call_one`, timed, in a tool-call span when a plugin traces runs."""
    start = time.perf_counter()
    span = None
    if deps.instrumentation is not None:
        span = deps.instrumentation.start_tool_call(call=call)  # in this call's own task
    try:
        outcome = await call_one(deps, run, call, tools, decision)
    except BaseException:  # cancelled
        if span is not None:
            span.finish(result=None, error="the tool call was cancelled")
        raise
    if span is not None:
        span.finish(result=outcome.text, error=outcome.error)
    outcome.seconds = time.perf_counter() - start
    return outcome


async def call_one(
    deps: RunDeps,
    run: RunState,
    call: ToolCall,
    tools: dict[str, Tool],
    decision: ToolConfirmation | None,
) -> CallOutcome:
    """One call, from its decision to its outcome; whatever the tool raises is its
    outcome (the run goes on) unless it is one that ends the run."""
    tool = tools.get(call.name)
    try:
        if tool is None:
            raise ToolError(
                f"there is no tool named {call.name!r}; the tools are: {', '.join(tools) or 'none'}"
            )
        decided = decide(call, decision)
        if isinstance(decided, CallOutcome):
            return decided
        return await invoke(deps, run, decided, tool)
    except Exception as exc:
        return outcome_of(exc, run, call, tool)


def decide(call: ToolCall, decision: ToolConfirmation | None) -> ToolCall | CallOutcome:
    """What the caller decided for a call that waited: refused (the model is told the user
    declined it), run outside the agent (its result as given), or the call to run (with
    the user's input over the model's arguments)."""
    if decision is None:
        return call
    if not decision.confirmed:
        reason = f": {decision.reason}" if decision.reason else ""
        raise ToolError(f"the user declined this tool call{reason}")
    if decision.external_execution:  # run by the caller
        return CallOutcome(decision.result, None, result_text(decision.result))
    if decision.user_input_schema is not None:
        return decision.with_user_input(call)
    return call


async def invoke(deps: RunDeps, run: RunState, call: ToolCall, tool: Tool) -> CallOutcome:
    """Run ``tool`` on ``call`` (through the tool hooks) under its timeout (the tool's,
    else the agent's ``tool_timeout``; None: none)."""
    if not isinstance(call.arguments, dict):
        raise ToolError("the arguments must be a JSON object")
    context = ToolContext(
        runtime=deps.runtime,
        tool_call=call,
        session_state=run.session.session_state if run.session is not None else {},
        session_id=run.session.session_id if run.session is not None else None,
        user_id=run.session.user_id if run.session is not None else None,
        deps=run.tool_deps,
        retry=run.retries.get(call.name, 0),
        run_id=run.id,
        agent=deps.agent,
        run_context=run_context_of(run),
    )
    if deps.tool_hooks:
        invoking = functools.partial(tool.invoke, context=context)
        work = call_tool(deps.tool_hooks, call.name, call.arguments, invoking, deps.agent)
    else:
        work = tool.invoke(dict(call.arguments), context)
    timeout = tool.timeout if tool.timeout is not None else deps.tool_timeout
    result = await within(run_to_end(work, call.id), timeout, call.name)
    if isinstance(result, Yielded):
        text, value, events = result.text, result.text, result.events
    else:
        text, events = result_text(result), []
        value = result if isinstance(result, str) else json.loads(text)
    return CallOutcome(
        value,
        None,
        text,
        stop=None if tool.stop_after_tool_call else GOES_ON,
        shown=text if tool.show_result else None,
        events=events,
    )


async def run_to_end(work: Awaitable[Any], call_id: str) -> Any:
    """A tool's result; a generator tool's run to its end (`tool_yields`)."""
    result = await work
    return await drained(result, call_id) if is_yielding(result) else result


async def within(work: Awaitable[Any], seconds: float | None, name: str) -> Any:
    """``work``'s result, or a `ToolError` when it runs past ``seconds`` (None: no
    limit). Only this limit is the timeout: a ``TimeoutError`` the tool raises itself is
    the tool's own error."""
    if seconds is None:
        return await work
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except BaseException:  # cancelled: the tool's task goes too
        task.cancel()
        raise
    if not done:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise ToolError(f"the tool {name!r} did not finish within {seconds:g} s")
    return task.result()


def outcome_of(exc: Exception, run: RunState, call: ToolCall, tool: Tool | None) -> CallOutcome:
    """What a tool's exception means: a `StopAgentRun` ends the run cleanly (its message
    is the result); `RetryAgentRun` and `ModelRetry` give the model their message to try
    again (a `ModelRetry` past the tool's ``retries`` stops the run); anything else is an
    error result the model reads, and the run goes on."""
    if isinstance(exc, StopAgentRun):
        return CallOutcome(None, None, str(exc), stop=str(exc), added=added_messages(exc))
    if isinstance(exc, RetryAgentRun):
        log.debug("tool_call_retry", tool=call.name, tool_call_id=call.id)
        return CallOutcome(None, str(exc), str(exc), added=added_messages(exc))
    if isinstance(exc, ModelRetry):
        assert tool is not None
        return retried(exc, run, call, tool)
    if isinstance(exc, ToolError):
        error = exc.message
    elif isinstance(exc, FerruleError):  # e.g. an operator's typed error
        error = f"{exc.kind}: {exc.message}"
    else:
        error = f"{type(exc).__name__}: {exc}"
    log.debug("tool_call_failed", tool=call.name, tool_call_id=call.id, error=error)
    return CallOutcome.failed(error)


def retried(exc: ModelRetry, run: RunState, call: ToolCall, tool: Tool) -> CallOutcome:
    """A `ModelRetry`: its message is the result, and the tool's retries are counted."""
    retries = run.retries.get(call.name, 0)
    outcome = CallOutcome(None, exc.message, exc.message)
    if retries >= tool.retries:
        outcome.exceeded = ToolRetriesExceededError(
            f"the tool {call.name!r} asked the model to retry more than the "
            f"{tool.retries} time(s) it may: {exc.message}",
            tool=call.name,
            retries=tool.retries,
        )
    run.retries[call.name] = retries + 1
    log.debug("tool_call_retry", tool=call.name, tool_call_id=call.id)
    return outcome


def record(
    deps: RunDeps, run: RunState, calls: list[ToolCall], outcomes: list[CallOutcome], sink: Sink
) -> None:
    """Join each call's result to the run, in the calls' order, and tell the sink; then
    what a `RetryAgentRun` / `StopAgentRun` added, after every result (as in Agno: the
    model's next turn sees it)."""
    run.metrics.tool_calls += len(calls)
    run.requirements = []
    for call, outcome in zip(calls, outcomes, strict=True):
        message = Message("tool", outcome.text, tool_call_id=call.id)
        run.messages.append(message)
        run.executions.append(
            ToolExecution(
                call.id, call.name, call.arguments, outcome.result, outcome.error, outcome.seconds
            )
        )
        # the tool and how it went, never its arguments or result (they may be secret)
        if deps.debug_mode:
            log.debug(
                "tool_call",
                run_id=run.id,
                agent_id=deps.agent_id,
                tool=call.name,
                failed=outcome.error is not None,
                seconds=round(outcome.seconds, 3),
            )
        for event in outcome.events:
            sink.custom(event)
        sink.tool_result(message, call.name, outcome.result, outcome.error)
    for outcome in outcomes:
        run.messages += outcome.added
    run.shown += [o.shown for o in outcomes if o.shown is not None]


def added_messages(exc: AgentRunException) -> list[Message]:
    """The messages a tool's `RetryAgentRun` / `StopAgentRun` adds to its run's conversation:
    ``user_message`` (a user message), ``agent_message`` (an assistant message), then
    ``messages`` (`Message`s or their dicts; a bad one is refused naming it)."""
    added: list[Message] = []
    user, agent = exc.user_message, exc.agent_message
    if user is not None:
        added.append(user if isinstance(user, Message) else Message("user", str(user)))
    if agent is not None:
        added.append(agent if isinstance(agent, Message) else Message("assistant", str(agent)))
    added += [as_message(m, i) for i, m in enumerate(exc.messages or ())]
    return added
