"""The turn loop: `drive` takes one run (`RunState`) through named steps, telling its
`Sink` each: `admit` (its model defined, the pre-hooks) and `start` (its session begun,
the reasoning model's thinking); then model turns (`model_turn`: `infer_inputs`,
`stream_reply` falling back along the models in `open_infer`, `distinct_call_ids`) and
their tool calls (`waiting_calls` for a human, else `tool_execution.execute_tools`) until
the model answers (`reply`), a call waits (`pause`) or the run fails (`fail`); then
`complete` (post-hooks, storing), and `settle` either way. Each step is a function over
(`RunDeps`, `RunState`, `Sink`), testable alone; none sees the `Agent`."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncGenerator
from typing import Any

import attrs
from ferrule_kernel import FerruleError, get_logger
from ferrule_kit.content.messages import Message, ToolCall, converter
from ferrule_kit.models.lm import MessageAccumulator

from ..metrics import ModelCallMetrics, ModelType, add_model_usage
from ..models import model_request
from ..tools import Tool
from ..tools.function import user_input_for
from .cancellation import cancelled, cancels_here, installed_manager, register, release
from .deps import RunDeps
from .events import IntermediateRunContentEvent
from .failed_runs import failure_of
from .hooks import run_hooks
from .inputs import run_context_of
from .model_requests import tool_choice_sent
from .model_settings import StructuredOutputs, guidance_after, model_stream
from .output_schema import parse_output
from .reply_media import piece_of
from .results import RunStatus, ToolConfirmation
from .run_errors import FallbackModelsFailedError, OutputValidationError, ToolCallLimitError
from .sinks import END, Sink, model_names
from .state import RunState, media_of, run_input_of
from .tool_execution import execute_tools

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
    """Take ``run`` to its end (or its pause), telling ``sink`` each step: `admit` and
    `start`, then
    model turns (`model_turn`) and their tool calls (`tool_execution.execute_tools`, or
    `pause` when one waits for the caller) until the model answers (`reply`), then
    `complete`; a failure ends it through `fail`, and `settle` closes it either way."""
    fresh = not run.pending and (run.session is None or run.session.resume is None)
    hooked = fresh and bool(deps.pre_hooks)
    # a run with pre-hooks is traced from the input they leave (masked, or refused: none)
    span = None if hooked else run_span(deps, run)
    run.agent_name = deps.agent_name
    run.model, run.model_provider = model_names(deps.slots[0].model)
    sink.describe(deps.agent_id)
    try:
        await admit(deps, run, sink, hooked)
        if hooked:
            span = run_span(deps, run)
        await start(deps, run, sink, fresh)
        tools = await deps.resolve_tools(run_context_of(run))
        descriptions = [t.to_dict() for t in tools.values()]
        retries = deps.output_retries
        stopped = False
        if run.pending:  # resuming after a pause
            calls, run.pending = run.pending, []
            stopped = await execute_tools(deps, run, calls, tools, sink)
        while not stopped:
            await checkpoint(run)  # before each model request
            if deps.compress is not None:
                await deps.compress(run, sink, descriptions)
            message, usage = await model_turn(deps, run, sink, descriptions)
            calls = message.tool_calls
            over_limit = exceeds_tool_call_limit(run, calls)
            requirements = [] if over_limit else waiting_calls(calls, tools)
            sink.assistant(message, usage, requirements)
            if not calls:
                if deps.write_output is not None:
                    message = await deps.write_output(run, sink)
                if await reply(deps, run, sink, message, retries):
                    break
                retries -= 1  # the reply did not match the output schema: asked again
                continue
            if over_limit:
                raise tool_call_limit_error(run, calls)
            run.tool_calls_made += len(calls)
            if requirements:
                await pause(deps, run, message, requirements, sink)
                return
            await checkpoint(run)  # before each tool batch
            stopped = await execute_tools(deps, run, calls, tools, sink)
            await deps.sessions.checkpoint(run)
        await checkpoint(run)  # after the model's answer, before the run completes
        if deps.suggest_followups is not None and run.content is not None:
            await deps.suggest_followups(run, sink)
        await complete(deps, run, sink)
    except BaseException as exc:
        await fail(deps, run, sink, exc)
    finally:
        try:
            await unregister(run)
        finally:
            settle(deps, run, span, sink)


async def admit(deps: RunDeps, run: RunState, sink: Sink, hooked: bool) -> None:
    """Let the run in: registered with the installed cancellation manager and not
    cancelled already, its model defined, and (``hooked``: a fresh run with pre-hooks) its
    input through the pre-hooks, before the run is set up, so that a refused input is not
    stored."""
    run.running = True
    manager = installed_manager()
    await register(manager, run.id)
    run.canceller = manager
    await checkpoint(run)
    await deps.slots[0].ensure_defined(deps.runtime)
    if hooked:
        if run.session is not None:  # the hooks see the session's state, as Agno's do
            await deps.sessions.prepare(run)
        await run_pre_hooks(deps, run, sink)


async def start(deps: RunDeps, run: RunState, sink: Sink, fresh: bool) -> None:
    """Set the run up: its session begun (what it starts from), its knowledge searches
    recorded, its start told, and (``fresh``) the reasoning model's thinking."""
    if run.session is not None and not run.session.ready:
        await deps.sessions.begin(run)
    deps.track_references(run)
    if fresh:
        sink.started()
    else:  # a paused run resumes
        sink.continued()
    debug(deps, "run_started", run, kind=run.kind.name, messages=len(run.messages))
    if fresh and deps.reason is not None:
        await checkpoint(run)
        sink.reasoning_started()
        await deps.reason(run, sink)
        sink.reasoning_completed()


#: How often (seconds) a streaming model turn asks the run's cancellation manager.
MANAGER_POLL = 0.05


async def checkpoint(run: RunState) -> None:
    """Stop here if the run was cancelled: a local cancel, or its cancellation manager
    saying so (Agno's checkpoints: the run's start, before reasoning, each model request,
    streamed items every `MANAGER_POLL` seconds, each tool batch, the answer); it ends
    ``cancelled`` as a local cancel ends it. A failing manager ends it with `CancellationManagerError`."""
    if not run.cancel_requested and run.canceller is not None:
        run.cancel_requested = await cancelled(run.canceller, run.id)
    if run.cancel_requested:
        raise asyncio.CancelledError


async def unregister(run: RunState) -> None:
    """The run ended or paused: removed from its cancellation manager (a resumed run
    registers again)."""
    manager, run.canceller = run.canceller, None
    if manager is not None:
        await release(manager, run.id)


def exceeds_tool_call_limit(run: RunState, calls: list[ToolCall]) -> bool:
    limit = run.tool_call_limit
    return limit is not None and run.tool_calls_made + len(calls) > limit


def tool_call_limit_error(run: RunState, calls: list[ToolCall]) -> ToolCallLimitError:
    limit = run.tool_call_limit
    return ToolCallLimitError(
        f"the run reached its tool_call_limit of {limit}: "
        f"{run.tool_calls_made} call(s) made, {len(calls)} more requested",
        limit=limit,
        requested=[c.name for c in calls],
    )


def waiting_calls(calls: list[ToolCall], tools: dict[str, Tool]) -> list[ToolConfirmation]:
    """The calls that wait for the caller (to confirm them, run them, or give their
    input), as the requirements a paused run holds, in the calls' order."""
    return [
        ToolConfirmation(
            call,
            external_execution=tools[call.name].external_execution,
            user_input_schema=user_input_for(tools[call.name], call.arguments),
        )
        for call in calls
        if call.name in tools and pauses_for(tools[call.name])
    ]


async def reply(deps: RunDeps, run: RunState, sink: Sink, message: Message, retries: int) -> bool:
    """The model answered: the run's content is its reply (after the results shown),
    parsed into the output schema when there is one. False when the reply does not match
    the schema and ``retries`` are left: the model is asked again."""
    if run.output is None or not deps.parse_response:
        run.content = "\n".join([*run.shown, message.text] if message.text else run.shown)
        return True
    if deps.parse_reply is not None:
        sink.parser_started()
        run.content = await deps.parse_reply(run, message.text)
        sink.parser_completed()
        return True
    try:
        run.content = parse_output(run.output, message.text)
        return True
    except OutputValidationError as exc:
        if retries <= 0:
            raise
        run.messages.append(
            Message(
                "user",
                f"Your reply is not valid: {exc.message}. Reply again with only a "
                "JSON value that matches the required schema.",
            )
        )
        return False


async def pause(
    deps: RunDeps,
    run: RunState,
    message: Message,
    requirements: list[ToolConfirmation],
    sink: Sink,
) -> None:
    """A call waits for the caller: the run keeps the turn's calls and stops, stored
    before anyone hears it paused."""
    run.pending = list(message.tool_calls)
    run.requirements = requirements
    run.status = "paused"
    await deps.sessions.end(run, sink)
    sink.paused(message)


async def complete(deps: RunDeps, run: RunState, sink: Sink) -> None:
    """The post-hooks on the output, then the run completed, stored, and (a query) its
    messages joined to the agent's conversation."""
    sink.content_completed()
    if deps.post_hooks:
        await run_post_hooks(deps, run, sink)
    run.status = "completed"
    debug(deps, "run_completed", run, tool_calls=run.metrics.tool_calls)
    await deps.sessions.end(run, sink)
    if run.kind.joins_conversation:
        deps.history.extend(run.messages[run.first_new :])
    sink.completed()


async def fail(deps: RunDeps, run: RunState, sink: Sink, exc: BaseException) -> None:
    """End the run with one typed error (`failed_runs.failure_of`: cancelled, or status
    ``error``; an Agno run's content its message when it has none); it is stored as it
    ended. ``KeyboardInterrupt`` and ``SystemExit`` are not the run's to handle."""
    failure = failure_of(exc, run.id)
    if failure is None:
        raise exc
    run.status, run.error = failure
    if run.status == "error" and run.kind.returns_output and run.content is None:
        run.content = run.error.message
    await deps.sessions.end_quietly(run)
    sink.failed(run.error)


def settle(deps: RunDeps, run: RunState, span: Any, sink: Sink) -> None:
    """However the run ended: its duration, its span finished, the agent's table of
    running runs left (a paused run stays, to be continued), and the stream's end."""
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
    """A step of ``run``, logged at debug level when the agent (or the run) has
    ``debug_mode``."""
    if run.flags.debug_mode if run.flags.debug_mode is not None else deps.debug_mode:
        log.debug(event, run_id=run.id, agent_id=deps.agent_id, **fields)


def hook_arguments(deps: RunDeps, run: RunState) -> dict[str, Any]:
    context = run.session
    flag = run.flags.debug_mode
    return {
        **run.hook_arguments,  # the caller's other keywords (Agno's **kwargs)
        "agent": deps.agent,
        "session_id": context.session_id if context else None,
        "user_id": context.user_id if context else None,
        "metadata": context.metadata if context else {},
        "debug_mode": flag if flag is not None else deps.debug_mode,
        "run_context": run_context_of(run),
    }


async def run_pre_hooks(deps: RunDeps, run: RunState, sink: Sink) -> None:
    """Run the pre-hooks on the run's input; the run starts from what they leave."""
    run_input = run_input_of(run.input, run.files)
    arguments = {"run_input": run_input, **hook_arguments(deps, run)}

    def told(name: str, done: bool) -> None:
        (sink.hook_completed if done else sink.hook_started)("pre", name, run_input)

    await run_hooks(deps.pre_hooks, run_input, arguments, told)
    debug(deps, "pre_hooks_passed", run, hooks=len(deps.pre_hooks))
    content, files = run_input.input_content, media_of(run_input)
    run.messages = run.kind.messages(content, files if run.send_media else ())
    run.first_new = run.kind.first_new(run.messages)
    run.input, run.files = content, files
    if run.session is not None:  # what is stored: the input as the hooks left it
        run.session.input = content if isinstance(content, str) else None


async def run_post_hooks(deps: RunDeps, run: RunState, sink: Sink) -> None:
    """Run the post-hooks on the run's output; its content is what they leave."""
    output = run.to_output()
    output.status = RunStatus.completed
    arguments = {
        "run_output": output,
        "session_state": output.session_state,
        **hook_arguments(deps, run),
    }

    def told(name: str, done: bool) -> None:
        (sink.hook_completed if done else sink.hook_started)("post", name, output)

    await run_hooks(deps.post_hooks, output, arguments, told)
    debug(deps, "post_hooks_passed", run, hooks=len(deps.post_hooks))
    run.content = output.content
    if run.session is not None:
        run.session.metadata = output.metadata


async def model_turn(
    deps: RunDeps,
    run: RunState,
    sink: Sink,
    tools: list[dict[str, Any]],
    notes: tuple[dict[str, Any], ...] = (),
) -> tuple[Message, dict[str, int] | None]:
    """One model call: the run's messages (and ``tools``) sent, the reply streamed to the
    sink as it comes and accumulated into the assistant message the run records (its
    calls' ids made distinct, `distinct_call_ids`); the usage limits checked before and
    after. A malformed tool call is asked again with a note (``notes``: the ones sent,
    which the run's messages do not keep) while the model's retry_with_guidance allows."""
    inputs = infer_inputs(deps, run, tools)
    if notes:
        inputs["messages"] = [*inputs["messages"], *notes]
    if run.usage_limits is not None:
        run.usage_limits.check_before_request(run.metrics)
    accumulator = MessageAccumulator()
    metrics = ModelCallMetrics()
    sent = {"sent": [f"{m.role}: {m.text}" for m in run.messages]} if deps.debug_level > 1 else {}
    debug(deps, "model_request", run, messages=len(run.wire), tools=len(tools), **sent)
    span = None
    if deps.instrumentation is not None:
        span = deps.instrumentation.start_model_call(route=deps.route, inputs=inputs)
    sink.model_request_started()
    try:
        await stream_reply(deps, inputs, accumulator, metrics, sink)
        usage = accumulator.usage or {}
        metrics.input_tokens = usage.get("input_tokens", 0)
        metrics.output_tokens = usage.get("output_tokens", 0)
        metrics.reasoning_tokens = usage.get("reasoning_tokens")
        metrics.finish_reason = accumulator.finish_reason
        run.metrics.model_calls.append(metrics)
        model, provider = run.model or "", run.model_provider or ""
        add_model_usage(run.metrics, ModelType.MODEL, model, provider, usage)
        sink.model_request_completed(metrics)
        message = accumulator.message()  # InvalidToolCallError when arguments are not JSON
    except BaseException as exc:
        finish_model_span(span, accumulator, metrics, None, exc)
        guidance = guidance_after(deps.slots[0].model, exc, len(notes))
        if guidance is None:
            if deps.retry is not None and await deps.retry.again(run, exc):
                return await model_turn(deps, run, sink, tools, notes)
            raise
        note = converter.unstructure(guidance)
        return await model_turn(deps, run, sink, tools, (*notes, note))
    finish_model_span(span, accumulator, metrics, message, None)
    message = distinct_call_ids(message)
    run.messages.append(message)
    debug(
        deps,
        "model_response",
        run,
        finish_reason=metrics.finish_reason,
        tool_calls=[call.name for call in message.tool_calls],
        **({"text": message.text} if deps.debug_level > 1 else {}),
        output_tokens=metrics.output_tokens,
        seconds=round(metrics.latency, 3),
    )
    if run.usage_limits is not None:
        run.usage_limits.check_tokens(run.metrics)
    return message, accumulator.usage


def infer_inputs(deps: RunDeps, run: RunState, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The model's ``infer`` inputs: the agent's options, the run's own, and the run's
    messages on the wire (each converted once, as far as sent)."""
    for message in run.messages[len(run.wire) :]:
        run.wire.append(converter.unstructure(message))
    inputs: dict[str, Any] = {**deps.options, **run.infer_options, "messages": run.wire}
    if tools:
        # a provider's own tools (its declarations, not functions) go apart, as given
        functions = [t for t in tools if t.get("type") == "function"]
        if len(functions) < len(tools):
            inputs["provider_tools"] = [t for t in tools if t.get("type") != "function"]
        inputs["tools"] = functions
        choice = tool_choice_sent(deps.tool_choice, run)
        if choice is not None:
            inputs["tool_choice"] = choice
    if run.reasoning:
        inputs["reasoning"] = run.reasoning
    if run.output is not None and deps.parse_reply is None and deps.parse_response:
        structured = StructuredOutputs.of(deps.slots[0].model)
        inputs["output_schema"] = structured.schema_sent(run.output.schema, deps.use_json_mode)
    return inputs


async def stream_reply(
    deps: RunDeps,
    inputs: dict[str, Any],
    accumulator: MessageAccumulator,
    metrics: ModelCallMetrics,
    sink: Sink,
) -> None:
    """Stream the model's reply into ``accumulator``, its text and reasoning to the sink
    as they come, timing it into ``metrics``."""
    add, texts, on_text = accumulator.add, accumulator.text, sink.text
    if deps.write_output is not None:  # the output model's text is the content
        on_text = functools.partial(intermediate_text, sink)

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
        for part in delta.get("media", ()):
            if (piece := piece_of(part)) is not None:
                sink.media(piece)
        content = delta.get("content")
        text = content[0]["text"] if content else ""
        if text:
            on_text(text)

    start = time.perf_counter()
    stream, first = await open_infer(deps, inputs)
    try:
        if first is not None:
            metrics.time_to_first_token = time.perf_counter() - start
            fold(first)
            # A local cancel (the default manager's too) stops the task at once; another
            # manager (a cancel from another process) is asked every MANAGER_POLL seconds.
            polls, polled = not cancels_here(sink.run.canceller), time.monotonic()
            async for item in stream:
                fold(item)
                if polls and time.monotonic() - polled >= MANAGER_POLL:
                    await checkpoint(sink.run)
                    polled = time.monotonic()
    finally:
        await stream.aclose()
    metrics.latency = time.perf_counter() - start


def intermediate_text(sink: Sink, text: str) -> None:
    """The main model's text when an output model writes the content."""
    sink.announce(IntermediateRunContentEvent, content=text)


def finish_model_span(
    span: Any,
    accumulator: MessageAccumulator,
    metrics: ModelCallMetrics,
    message: Message | None,
    exception: BaseException | None,
) -> None:
    if span is not None:
        span.finish(
            message=message,
            finish_reason=accumulator.finish_reason,
            usage=accumulator.usage,
            time_to_first_token=metrics.time_to_first_token,
            exception=exception,
        )


def distinct_call_ids(message: Message) -> Message:
    """``message`` with each tool call's id distinct within the turn: a repeated id (a
    model may send ``"dup"`` twice) is renamed (``dup-2``, ...) before any decision is
    asked or result recorded, so that each decision and each result names one call."""
    calls = message.tool_calls
    given = {call.id for call in calls}
    if len(given) == len(calls):
        return message
    used: set[str] = set()
    renamed = []
    for call in calls:
        new_id, count = call.id, 1
        # the first keeps its id; a later one takes the next free "<id>-<n>" (not one
        # another call of the turn was given)
        while new_id in used or (new_id != call.id and new_id in given):
            count += 1
            new_id = f"{call.id}-{count}"
        used.add(new_id)
        renamed.append(call if new_id == call.id else attrs.evolve(call, id=new_id))
    return attrs.evolve(message, tool_calls=renamed)


async def open_infer(
    deps: RunDeps, inputs: dict[str, Any]
) -> tuple[AsyncGenerator[dict[str, Any], None], dict[str, Any] | None]:
    """Start ``infer`` and wait for its first item (None: the stream was empty): on the
    first model, then, while the one before failed before its first item, on each of the
    fallbacks the `FallbackModel` picks for the first model's failure (see `fallback`)."""
    failures: list[FerruleError] = []
    order = [0]
    for index in order:  # grows once, when the first model fails
        slot = deps.slots[index]
        await slot.ensure_defined(deps.runtime)
        # the model's own settings (Agno's OpenAIChat(temperature=...)) under the run's
        stream = model_stream(deps.runtime, slot, model_request(slot.model, inputs))
        try:
            first = await anext(stream)
        except StopAsyncIteration:
            return stream, None
        except FerruleError as exc:
            await stream.aclose()
            fallback = deps.fallback
            if fallback is None:
                raise
            if index == 0:
                order += fallback.fallbacks_for(exc)
                if len(order) == 1:
                    raise
            elif fallback.config is None and not fallback.falls_back_on(exc):
                raise
            failures.append(exc)
            log.info("model_fallback", model=index, error=exc.kind)
            continue
        if failures and deps.fallback is not None:
            stream = deps.fallback.told(stream, index, failures[0])
        return stream, first
    assert deps.fallback is not None  # only a FallbackModel gets past its first model
    raise FallbackModelsFailedError(
        f"all {len(failures)} models failed; the last one: {failures[-1].message}",
        failures=[{**error.to_dict(), "model": i} for i, error in enumerate(failures)],
    )
