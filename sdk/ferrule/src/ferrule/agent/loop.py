"""The turn loop: `drive` takes one run (`RunState`) through model turns (`model_turn`,
falling back along the models in `open_infer`) and tool calls (`execute_tools`) until the
model answers, a tool call waits for a human, or the run fails, telling its `Sink` each
step; hooks, tracing spans, limits and the session's begin and end happen here, in order.
It works over (`RunDeps`, `RunState`, `Sink`) and never sees the `Agent`."""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import AsyncGenerator
from typing import Any

from ferrule_kernel import FerruleError, RequestCancelledError, get_logger
from ferrule_kit.guardrails import RunInput
from ferrule_kit.lm import ANY_JSON_OBJECT, MessageAccumulator
from ferrule_kit.messages import Message, ToolCall, converter
from ferrule_kit.storage import ToolExecution

from ..exceptions import AgentRunException, RetryAgentRun, StopAgentRun
from ..models import model_infer_options
from ..tools import (
    ModelRetry,
    Tool,
    ToolContext,
    ToolError,
    ToolRetriesExceededError,
    result_text,
)
from ..tools.function import user_input_for
from .context import as_message, run_context_of
from .deps import RunDeps
from .errors import FallbackModelsFailedError, OutputValidationError, ToolCallLimitError
from .hooks import call_tool, run_hooks
from .output_schema import parse_output
from .results import ModelCallMetrics, RunStatus, ToolConfirmation
from .sinks import END, Sink
from .state import RunState

log = get_logger("ferrule.agent")


def run_span(deps: RunDeps, run: RunState) -> Any:
    """The run's span, when a plugin instruments runs (None otherwise)."""
    if deps.instrumentation is None:
        return None
    return deps.instrumentation.start_run(
        run_id=run.id,
        agent_name=deps.agent_name,
        agent_id=deps.agent_id,
        conversation_id=run.session.session_id if run.session is not None else None,
        route=deps.route,
        messages=list(run.messages),
    )


async def drive(deps: RunDeps, run: RunState, sink: Sink) -> None:
    fresh = not run.pending and (run.session is None or run.session.resume is None)
    hooked = fresh and bool(deps.pre_hooks)
    # a run with pre-hooks is traced from the input they leave (masked, or refused: none)
    span = None if hooked else run_span(deps, run)
    try:
        run.running = True
        if run.cancel_requested:
            raise asyncio.CancelledError
        await deps.slots[0].ensure_defined(deps.runtime)
        if hooked:  # before the run is set up: a refused input is not stored
            await run_pre_hooks(deps, run)
            span = run_span(deps, run)
        if run.session is not None and not run.session.ready:
            await deps.sessions.begin(run)
        deps.track_references(run)
        sink.started()
        debug(deps, "run_started", run, kind=run.kind.name, messages=len(run.messages))
        if fresh and deps.reason is not None:
            await deps.reason(run, sink)
        tools = await deps.resolve_tools(run_context_of(run))
        descriptions = [t.to_dict() for t in tools.values()]
        retries = deps.output_retries
        stopped = False
        if run.pending:  # resuming after a pause
            calls, run.pending = run.pending, []
            stopped = await execute_tools(deps, run, calls, tools, sink)
        while not stopped:
            message, usage = await model_turn(deps, run, sink, descriptions)
            calls = message.tool_calls
            limit = run.tool_call_limit
            over_limit = limit is not None and run.tool_calls_made + len(calls) > limit
            waiting = [c for c in calls if c.name in tools and pauses_for(tools[c.name])]
            requirements = (
                []
                if over_limit
                else [
                    ToolConfirmation(
                        c,
                        external_execution=tools[c.name].external_execution,
                        user_input_schema=user_input_for(tools[c.name], c.arguments),
                    )
                    for c in waiting
                ]
            )
            sink.assistant(message, usage, requirements)
            if not calls:
                if run.output is None or not deps.parse_response:
                    run.content = "\n".join(
                        [*run.shown, message.text] if message.text else run.shown
                    )
                    break
                if deps.parse_reply is not None:
                    run.content = await deps.parse_reply(run, message.text)
                    break
                try:
                    run.content = parse_output(run.output, message.text)
                    break
                except OutputValidationError as exc:
                    if retries <= 0:
                        raise
                    retries -= 1
                    run.messages.append(
                        Message(
                            "user",
                            f"Your reply is not valid: {exc.message}. Reply again with only a "
                            "JSON value that matches the required schema.",
                        )
                    )
                    continue
            if over_limit:
                raise ToolCallLimitError(
                    f"the run reached its tool_call_limit of {limit}: "
                    f"{run.tool_calls_made} call(s) made, {len(calls)} more requested",
                    limit=limit,
                    requested=[c.name for c in calls],
                )
            run.tool_calls_made += len(calls)
            if requirements:
                run.pending = list(calls)
                run.requirements = requirements
                run.status = "paused"
                await deps.sessions.end(run)  # stored before anyone hears it paused
                sink.paused(message)
                return
            stopped = await execute_tools(deps, run, calls, tools, sink)
        if deps.post_hooks:
            await run_post_hooks(deps, run)
        run.status = "completed"
        debug(deps, "run_completed", run, tool_calls=run.metrics.tool_calls)
        await deps.sessions.end(run)
        if run.kind.joins_conversation:
            deps.history.extend(run.messages[run.first_new :])
        sink.completed()
    except asyncio.CancelledError:
        run.status = "cancelled"
        run.error = RequestCancelledError("the run was cancelled", run_id=run.id)
        await deps.sessions.end_quietly(run)
        sink.failed(run.error)
    except FerruleError as exc:
        run.status, run.error = "error", exc
        await deps.sessions.end_quietly(run)
        sink.failed(exc)
    except Exception as exc:  # a bug must still end the stream with one typed error
        log.exception("agent_run_failed", run_id=run.id)
        run.status = "error"
        run.error = FerruleError(
            f"the agent run failed: {type(exc).__name__}: {exc}", run_id=run.id
        )
        await deps.sessions.end_quietly(run)
        sink.failed(run.error)
    finally:
        run.running = False
        run.metrics.duration = run.elapsed + time.perf_counter() - run.started
        if span is not None:
            last = run.messages[-1] if run.messages else None
            span.finish(
                status=run.status,
                output=last if last is not None and last.role == "assistant" else None,
                input_tokens=run.metrics.input_tokens,
                output_tokens=run.metrics.output_tokens,
                exception=run.error,
            )
        if run.status == "paused":
            run.elapsed = run.metrics.duration
        else:
            deps.runs.pop(run.id, None)
        sink.channel.put(END)


def pauses_for(tool: Tool) -> bool:
    """True when a call of ``tool`` waits for the caller: to confirm it, or to run it."""
    return tool.requires_confirmation or tool.external_execution or tool.requires_user_input


def debug(deps: RunDeps, event: str, run: RunState, **fields: Any) -> None:
    """A step of ``run``, logged at debug level when the agent has ``debug_mode``."""
    if deps.debug_mode:
        log.debug(event, run_id=run.id, agent_id=deps.agent_id, **fields)


def hook_arguments(deps: RunDeps, run: RunState) -> dict[str, Any]:
    context = run.session
    return {
        "agent": deps.agent,
        "session_id": context.session_id if context else None,
        "user_id": context.user_id if context else None,
        "metadata": context.metadata if context else {},
        "debug_mode": deps.debug_mode,
    }


async def run_pre_hooks(deps: RunDeps, run: RunState) -> None:
    """Run the pre-hooks on the run's input; the run starts from what they leave."""
    run_input = RunInput(run.input, run.files)
    arguments = {"run_input": run_input, **hook_arguments(deps, run)}
    await run_hooks(deps.pre_hooks, run_input, arguments)
    debug(deps, "pre_hooks_passed", run, hooks=len(deps.pre_hooks))
    content, files = run_input.input_content, run_input.files
    run.messages = run.kind.messages(content, files)
    run.first_new = run.kind.first_new(run.messages)
    run.input, run.files = content, files
    if run.session is not None:  # what is stored: the input as the hooks left it
        run.session.input = content if isinstance(content, str) else None


async def run_post_hooks(deps: RunDeps, run: RunState) -> None:
    """Run the post-hooks on the run's output; its content is what they leave."""
    output = run.to_output()
    output.status = RunStatus.completed
    arguments = {
        "run_output": output,
        "session_state": output.session_state,
        **hook_arguments(deps, run),
    }
    await run_hooks(deps.post_hooks, output, arguments)
    debug(deps, "post_hooks_passed", run, hooks=len(deps.post_hooks))
    run.content = output.content
    if run.session is not None:
        run.session.metadata = output.metadata


async def model_turn(
    deps: RunDeps, run: RunState, sink: Sink, tools: list[dict[str, Any]]
) -> tuple[Message, dict[str, int] | None]:
    for message in run.messages[len(run.wire) :]:
        run.wire.append(converter.unstructure(message))
    inputs: dict[str, Any] = {**deps.options, **run.infer_options, "messages": run.wire}
    if tools:
        inputs["tools"] = tools
    if run.reasoning:
        inputs["reasoning"] = run.reasoning
    if run.output is not None and deps.parse_reply is None and deps.parse_response:
        inputs["output_schema"] = ANY_JSON_OBJECT if deps.use_json_mode else run.output.schema
    if run.usage_limits is not None:
        run.usage_limits.check_before_request(run.metrics)
    accumulator = MessageAccumulator()
    add, texts, on_text = accumulator.add, accumulator.text, sink.text
    metrics = ModelCallMetrics()
    start = time.perf_counter()

    def fold(item: dict[str, Any]) -> None:
        delta = item["message"]
        if len(delta) == 2 and item.get("finish_reason") is None:
            # a plain text delta (role and content only), nearly every item: fold it
            # here rather than through the general MessageAccumulator.add
            text = delta["content"][0]["text"]
            if text:
                texts.append(text)
                on_text(text)
            return
        add(item)
        for part in delta.get("reasoning", ()):
            if part["text"]:
                sink.reasoning(part["text"])
        content = delta.get("content")
        text = content[0]["text"] if content else ""
        if text:
            on_text(text)

    debug(deps, "model_request", run, messages=len(run.wire), tools=len(tools))
    span = None
    if deps.instrumentation is not None:
        span = deps.instrumentation.start_model_call(route=deps.route, inputs=inputs)
    try:
        stream, first = await open_infer(deps, inputs)
        try:
            if first is not None:
                metrics.time_to_first_token = time.perf_counter() - start
                fold(first)
                async for item in stream:
                    fold(item)
        finally:
            await stream.aclose()
        metrics.latency = time.perf_counter() - start
        usage = accumulator.usage or {}
        metrics.input_tokens = usage.get("input_tokens", 0)
        metrics.output_tokens = usage.get("output_tokens", 0)
        metrics.reasoning_tokens = usage.get("reasoning_tokens")
        metrics.finish_reason = accumulator.finish_reason
        run.metrics.model_calls.append(metrics)
        message = accumulator.message()  # InvalidToolCallError when arguments are not JSON
    except BaseException as exc:
        if span is not None:
            span.finish(
                message=None,
                finish_reason=accumulator.finish_reason,
                usage=accumulator.usage,
                time_to_first_token=metrics.time_to_first_token,
                exception=exc,
            )
        raise
    if span is not None:
        span.finish(
            message=message,
            finish_reason=accumulator.finish_reason,
            usage=accumulator.usage,
            time_to_first_token=metrics.time_to_first_token,
            exception=None,
        )
    run.messages.append(message)
    debug(
        deps,
        "model_response",
        run,
        finish_reason=metrics.finish_reason,
        tool_calls=[call.name for call in message.tool_calls],
        output_tokens=metrics.output_tokens,
        seconds=round(metrics.latency, 3),
    )
    if run.usage_limits is not None:
        run.usage_limits.check_tokens(run.metrics)
    return message, accumulator.usage


async def open_infer(
    deps: RunDeps, inputs: dict[str, Any]
) -> tuple[AsyncGenerator[dict[str, Any], None], dict[str, Any] | None]:
    """Start ``infer`` and wait for its first item (None: the stream was empty): on the
    first model, then on each fallback in turn while the one before failed before its
    first item with an error the `FallbackModel` falls back on (see `fallback`)."""
    failures: list[FerruleError] = []
    for index, slot in enumerate(deps.slots):
        await slot.ensure_defined(deps.runtime)
        # the model's own settings (Agno's OpenAIChat(temperature=...)) under the run's
        stream = deps.runtime.acall_iter_method(
            slot.component, "infer", {**model_infer_options(slot.model), **inputs}
        )
        try:
            return stream, await anext(stream)
        except StopAsyncIteration:
            return stream, None
        except FerruleError as exc:
            await stream.aclose()
            fallback = deps.fallback
            if fallback is None or not fallback.falls_back_on(exc):
                raise
            failures.append(exc)
            log.info("model_fallback", model=index, error=exc.kind)
    assert deps.fallback is not None  # only a FallbackModel gets past its first model
    raise FallbackModelsFailedError(
        f"all {len(failures)} models failed; the last one: {failures[-1].message}",
        failures=[{**error.to_dict(), "model": i} for i, error in enumerate(failures)],
    )


async def execute_tools(
    deps: RunDeps, run: RunState, calls: list[ToolCall], tools: dict[str, Tool], sink: Sink
) -> bool:
    """Run the calls concurrently; results are sent in the calls' order. True when the run
    ends here (a tool with ``stop_after_tool_call``, or one that raised `StopAgentRun`): its
    content is then what those tools returned."""
    decisions = {r.tool_call.id: r for r in run.requirements}
    stops: dict[str, str | None] = {}  # call id -> a StopAgentRun's message, or None
    added: dict[str, list[Message]] = {}  # call id -> the messages its exception adds
    shown: dict[str, str] = {}  # call id -> its result, when its tool shows it
    context_runtime = deps.runtime
    session = run.session
    state = session.session_state if session is not None else {}
    session_id = session.session_id if session is not None else None
    user_id = session.user_id if session is not None else None
    run_context = run_context_of(run)
    exceeded: list[ToolRetriesExceededError] = []
    instrumentation = deps.instrumentation
    sink.tools_started(calls)

    async def call_one(call: ToolCall) -> tuple[Any, str | None, str]:
        tool = tools.get(call.name)
        try:
            if tool is None:
                raise ToolError(
                    f"there is no tool named {call.name!r}; the tools are: {', '.join(tools) or 'none'}"
                )
            decision = decisions.get(call.id)
            if decision is not None and not decision.confirmed:
                raise ToolError(
                    "the user declined this tool call"
                    + (f": {decision.reason}" if decision.reason else "")
                )
            if decision is not None and decision.external_execution:  # run by the caller
                text = result_text(decision.result)
                return decision.result, None, text
            if decision is not None and decision.user_input_schema is not None:
                call = decision.with_user_input(call)
            if not isinstance(call.arguments, dict):
                raise ToolError("the arguments must be a JSON object")
            retry = run.retries.get(call.name, 0)
            context = ToolContext(
                context_runtime,
                call,
                state,
                session_id,
                user_id,
                run.tool_deps,
                retry,
                run.id,
                deps.agent,
                run_context,
            )
            if deps.tool_hooks:
                work = call_tool(
                    deps.tool_hooks,
                    call.name,
                    call.arguments,
                    functools.partial(tool.invoke, context=context),
                    deps.agent,
                )
            else:
                work = tool.invoke(dict(call.arguments), context)
            timeout = tool.timeout if tool.timeout is not None else deps.tool_timeout
            result = await (asyncio.wait_for(work, timeout) if timeout is not None else work)
            text = result_text(result)
            if tool.show_result:
                shown[call.id] = text
            if tool.stop_after_tool_call:
                stops[call.id] = None
            return (result if isinstance(result, str) else json.loads(text)), None, text
        except asyncio.TimeoutError:
            error = f"the tool {call.name!r} did not finish within {timeout:g} s"
        except StopAgentRun as exc:  # the run ends cleanly, with the tool's message
            stops[call.id] = str(exc)
            added[call.id] = messages_of(exc)
            return None, None, str(exc)
        except RetryAgentRun as exc:  # the message is the result: the model tries again
            log.debug("tool_call_retry", tool=call.name, tool_call_id=call.id)
            added[call.id] = messages_of(exc)
            return None, str(exc), str(exc)
        except ModelRetry as exc:  # the message is the result: the model tries again
            assert tool is not None
            retries = run.retries.get(call.name, 0)
            if retries >= tool.retries:
                exceeded.append(
                    ToolRetriesExceededError(
                        f"the tool {call.name!r} asked the model to retry more than the "
                        f"{tool.retries} time(s) it may: {exc.message}",
                        tool=call.name,
                        retries=tool.retries,
                    )
                )
            run.retries[call.name] = retries + 1
            log.debug("tool_call_retry", tool=call.name, tool_call_id=call.id)
            return None, exc.message, exc.message
        except ToolError as exc:
            error = exc.message
        except FerruleError as exc:  # e.g. an operator's typed error
            error = f"{exc.kind}: {exc.message}"
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        log.debug("tool_call_failed", tool=call.name, tool_call_id=call.id, error=error)
        return None, error, json.dumps({"error": error}, ensure_ascii=False)

    async def timed(call: ToolCall) -> tuple[Any, str | None, str, float]:
        start = time.perf_counter()
        if instrumentation is None:
            result, error, text = await call_one(call)
            return result, error, text, time.perf_counter() - start
        span = instrumentation.start_tool_call(call=call)  # in this call's own task
        try:
            result, error, text = await call_one(call)
        except BaseException:  # cancelled
            span.finish(result=None, error="the tool call was cancelled")
            raise
        span.finish(result=text, error=error)
        return result, error, text, time.perf_counter() - start

    outcomes = await asyncio.gather(*(timed(c) for c in calls))
    if exceeded:
        raise exceeded[0]
    run.metrics.tool_calls += len(calls)
    run.requirements = []
    for call, (result, error, text, seconds) in zip(calls, outcomes, strict=True):
        message = Message("tool", text, tool_call_id=call.id)
        run.messages.append(message)
        execution = ToolExecution(call.id, call.name, call.arguments, result, error, seconds)
        run.executions.append(execution)
        # the tool and how it went, never its arguments or result (they may be secret)
        debug(
            deps,
            "tool_call",
            run,
            tool=call.name,
            failed=error is not None,
            seconds=round(seconds, 3),
        )
        sink.tool_result(message, call.name, result, error)
    # what a RetryAgentRun / StopAgentRun adds follows every result, as in Agno: the
    # model's next turn sees it (a stopped run ends with it in its messages)
    for call in calls:
        run.messages += added.get(call.id, ())
    run.shown += [shown[call.id] for call in calls if call.id in shown]
    if not stops:
        return False
    # a StopAgentRun's message is in the content: it says why the run ended
    reasons = [stops[c.id] for c in calls if c.id in stops]
    run.content = "\n".join([*run.shown, *(r for r in reasons if r is not None)])
    return True


def messages_of(exc: AgentRunException) -> list[Message]:
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
