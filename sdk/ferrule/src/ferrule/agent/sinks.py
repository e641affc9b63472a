"""How a run's events reach its reader: the `Channel` its outputs cross threads and loops
through, and the sinks that turn the turn loop's events into what each call streams
(`AgentResponse`s for `query`, `MessageOutput`s for `run` on a history, the typed events
of `ferrule.agent.events` for ``run(input, stream=True)``)."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import attrs
from ferrule_kernel import FerruleError
from ferrule_kit.content.messages import Message, ToolCall, ValuePart, converter
from ferrule_kit.guardrails import InputCheckError, OutputCheckError
from ferrule_kit.stores.storage import ToolExecution

from ..media import Audio
from ..metrics import ModelCallMetrics
from .deltas import (
    FinishReason,
    MessageDelta,
    MessageDeltaOutput,
    PartDelta,
    PartDeltaFunction,
    finish_reason_of,
)
from .events import (
    BaseAgentRunEvent,
    CustomEvent,
    MemoryUpdateCompletedEvent,
    MemoryUpdateStartedEvent,
    ModelRequestCompletedEvent,
    ModelRequestStartedEvent,
    ParserModelResponseCompletedEvent,
    ParserModelResponseStartedEvent,
    PostHookCompletedEvent,
    PostHookStartedEvent,
    PreHookCompletedEvent,
    PreHookStartedEvent,
    ReasoningCompletedEvent,
    ReasoningContentDeltaEvent,
    ReasoningStartedEvent,
    RunCancelledEvent,
    RunCompletedEvent,
    RunContentCompletedEvent,
    RunContentEvent,
    RunContinuedEvent,
    RunErrorEvent,
    RunPausedEvent,
    RunStartedEvent,
    SessionSummaryCompletedEvent,
    SessionSummaryStartedEvent,
    ToolCallCompletedEvent,
    ToolCallErrorEvent,
    ToolCallStartedEvent,
)
from .langmodel import LangModel
from .results import (
    AgentResponse,
    MessageOutput,
    ResponseContent,
    ResponseType,
    ToolConfirmation,
)
from .state import RunState

HookKind = Literal["pre", "post"]


def model_names(model: Any) -> tuple[str, str]:
    """A model's id and its provider's name, as Agno's events name them (a `LangModel`'s
    are those of the model it runs)."""
    if isinstance(model, LangModel):
        model = model.model
    provider = getattr(model, "get_provider", None)
    return (
        str(getattr(model, "id", None) or getattr(model, "name", None) or ""),
        str(provider() if callable(provider) else type(model).__name__),
    )


class Channel:
    """A run's outputs on their way to its reader, taken in batches. The run appends on its
    loop; a reader on another thread or loop is woken by one thread-safe call per batch
    (not per item, and with no task made per wake-up)."""

    __slots__ = ("items", "lock", "loop", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.items: list[Any] = []
        self.lock = threading.Lock()
        self.loop = loop  # where the run (the writer) lives
        self.waiter: Callable[[], Any] | None = None

    def put(self, item: Any) -> None:
        with self.lock:
            self.items.append(item)
            waiter, self.waiter = self.waiter, None
        if waiter is not None:
            try:
                waiter()
            except RuntimeError:  # the reader's loop is closed: nobody is left to wake
                pass

    def _swap(self) -> list[Any]:
        items, self.items = self.items, []
        return items

    def take_blocking(self) -> list[Any]:
        """For a reader thread (Ctrl-C interrupts the wait)."""
        while True:
            with self.lock:
                if self.items:
                    return self._swap()
                ready = threading.Event()
                self.waiter = ready.set
            ready.wait()

    async def take(self) -> list[Any]:
        loop = asyncio.get_running_loop()
        with self.lock:
            if self.items:
                return self._swap()
            woken = loop.create_future()
            if loop is self.loop:
                self.waiter = functools.partial(_resolve, woken)
            else:
                self.waiter = functools.partial(loop.call_soon_threadsafe, _resolve, woken)
        await woken
        with self.lock:
            return self._swap()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Sink:
    """Turns a run's events into what its stream yields, through ``channel``."""

    #: It streams the run's steps (Agno's ``stream_events``): worth a look-up for them.
    steps = False

    def __init__(self, channel: Channel, run: RunState) -> None:
        self.channel = channel
        self.run = run
        self.first = True
        self.agent_id = ""

    def describe(self, agent_id: str | None) -> None:
        """The id of the agent that runs it, for the events (its name and model are the
        run's)."""
        self.agent_id = agent_id or ""

    def _put(self, item: Any) -> None:
        if self.first:
            self.first = False
            if self.run.metrics.time_to_first_token is None:
                self.run.metrics.time_to_first_token = (
                    self.run.elapsed + time.perf_counter() - self.run.started
                )
        self.channel.put(item)

    def started(self) -> None: ...
    def continued(self) -> None:
        self.started()

    def hook_started(self, kind: HookKind, name: str, subject: Any) -> None: ...
    def hook_completed(self, kind: HookKind, name: str, subject: Any) -> None: ...
    def reasoning_started(self) -> None: ...
    def reasoning_completed(self) -> None: ...
    def model_request_started(self) -> None: ...
    def model_request_completed(self, metrics: ModelCallMetrics) -> None: ...
    def parser_started(self) -> None: ...
    def parser_completed(self) -> None: ...
    def announce(self, kind: type[BaseAgentRunEvent], **fields: Any) -> None: ...
    def custom(self, event: CustomEvent) -> None: ...
    def content_completed(self) -> None: ...
    def memory_started(self) -> None: ...
    def memory_completed(self, memories: list[Any] | None) -> None: ...
    def summary_started(self) -> None: ...
    def summary_completed(self, summary: Any) -> None: ...
    def text(self, delta: str) -> None: ...
    def reasoning(self, delta: str) -> None: ...
    def media(self, piece: Any) -> None: ...
    def tools_started(self, calls: list[ToolCall]) -> None: ...
    def assistant(
        self, message: Message, usage: dict[str, int] | None, requirements: list[ToolConfirmation]
    ) -> None: ...
    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None: ...
    def paused(self, message: Message) -> None: ...
    def completed(self) -> None: ...
    def failed(self, error: FerruleError) -> None: ...


class ResponseSink(Sink):
    """`query`: `AgentResponse` deltas with ``is_type_switched`` tracked."""

    def __init__(self, channel: Channel, run: RunState) -> None:
        super().__init__(channel, run)
        self.last: str | None = None

    def _emit(
        self, type_: ResponseType, role: Any, content: Any, error: FerruleError | None = None
    ) -> None:
        switched = type_ != self.last
        self.last = type_
        self._put(AgentResponse(type_, role, switched, content, error))

    def text(self, delta: str) -> None:
        if self.last == "output_text":  # the common case, kept short
            self._put(AgentResponse("output_text", "assistant", False, delta))
        else:
            self._emit("output_text", "assistant", delta)

    def reasoning(self, delta: str) -> None:
        self._emit("reasoning", "assistant", delta)

    def assistant(
        self, message: Message, usage: dict[str, int] | None, requirements: list[ToolConfirmation]
    ) -> None:
        for call in message.tool_calls:
            self._emit("tool_call", "assistant", ResponseContent(converter.unstructure(call)))

    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None:
        fields: dict[str, Any] = {"tool_call_id": message.tool_call_id, "name": name}
        if error is None:
            fields["result"] = result
        else:
            fields["error"] = error
        content = ResponseContent(fields, list(message.contents))
        self._emit("tool_call_result", "tool", content)

    def paused(self, message: Message) -> None:
        content = {
            "run_id": self.run.id,
            "requirements": [r.to_dict() for r in self.run.requirements],
        }
        self._emit("paused", "assistant", content)

    def failed(self, error: FerruleError) -> None:
        self._emit("error", "assistant", error.message, error)


class SilentReasoningSink(ResponseSink):
    """`query` with ``ignore_reasoning_messages``: the model reasons, nobody sees it."""

    def reasoning(self, delta: str) -> None:
        pass


def _finish_reason(run: RunState, message: Message) -> FinishReason:
    """Why an assistant message ended, as Ailoy says it: a turn that called tools ended
    for them; otherwise what the model's stream said."""
    if message.tool_calls:
        return FinishReason.ToolCall()
    calls = run.metrics.model_calls
    reason = finish_reason_of(calls[-1].finish_reason if calls else None)
    return reason if reason is not None else FinishReason.Stop()


class MessageSink(Sink):
    """`run`: one `MessageOutput` per finished message; a failure raises from the iterator."""

    def assistant(
        self, message: Message, usage: dict[str, int] | None, requirements: list[ToolConfirmation]
    ) -> None:
        reason = _finish_reason(self.run, message)
        self._put(MessageOutput(message, usage, tuple(requirements), reason))

    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None:
        # Ailoy's tool message holds the result as a value (`resp.message.contents[0].value`)
        valued = attrs.evolve(message, contents=[ValuePart(_tool_value(result, error))])
        self._put(MessageOutput(valued, finish_reason=FinishReason.Stop()))

    def paused(self, message: Message) -> None:
        pass  # the assistant message carried the requirements

    def failed(self, error: FerruleError) -> None:
        self._put(Failure(error))


class DeltaSink(MessageSink):
    """`run_delta` (Ailoy's): `MessageDeltaOutput`s, the text and reasoning as they
    stream; a message's last delta (its tool calls, or a tool's result) carries its
    ``finish_reason``."""

    def text(self, delta: str) -> None:
        self._put(MessageDeltaOutput(MessageDelta("assistant", [PartDelta.Text(delta)])))

    def reasoning(self, delta: str) -> None:
        self._put(MessageDeltaOutput(MessageDelta("assistant", thinking=delta)))

    def assistant(
        self, message: Message, usage: dict[str, int] | None, requirements: list[ToolConfirmation]
    ) -> None:
        calls: list[PartDelta] = [
            PartDelta.Function(c.id, PartDeltaFunction.WithParsedArgs(c.name, c.arguments))
            for c in message.tool_calls
        ]
        delta = MessageDelta("assistant", tool_calls=calls)
        self._put(MessageDeltaOutput(delta, _finish_reason(self.run, message)))

    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None:
        value = _tool_value(result, error)
        delta = MessageDelta("tool", [PartDelta.Value(value)], id=message.tool_call_id)
        self._put(MessageDeltaOutput(delta, FinishReason.Stop()))


def _tool_value(result: Any, error: str | None) -> Any:
    """A tool's result as the value of Ailoy's tool message: the result, or its error."""
    return result if error is None else {"error": error}


@attrs.frozen
class Failure:
    error: FerruleError


END = object()


class EventSink(Sink):
    """``run(input, stream=True, stream_events=True)``: every event of `events`, in
    Agno's order."""

    steps = True

    def __init__(self, channel: Channel, run: RunState) -> None:
        super().__init__(channel, run)
        self.thinking: list[str] | None = None  # while a reasoning model thinks

    def _step(self, event: Any, content: bool = False) -> None:
        """A step's event (``content``: one that counts as the run's first output)."""
        if content:
            self._put(event)
        else:
            self._keep(event)
            self.channel.put(event)

    def _put(self, item: Any) -> None:
        self._keep(item)
        super()._put(item)

    def _keep(self, event: Any) -> None:
        """With ``store_events``: ``event`` kept with the run, unless skipped."""
        skipped = self.run.events_skipped
        if skipped is not None and event.event not in skipped:
            if self.run.events is None:
                self.run.events = []
            self.run.events.append(event)

    def _ids(self) -> dict[str, Any]:
        context = self.run.session
        return {
            "run_id": self.run.id,
            "agent_id": self.agent_id,
            "agent_name": self.run.agent_name or "",
            "session_id": context.session_id if context else None,
        }

    def started(self) -> None:
        model, provider = self.run.model or "", self.run.model_provider or ""
        self._step(RunStartedEvent(model=model, model_provider=provider, **self._ids()))

    def continued(self) -> None:
        self._step(RunContinuedEvent(**self._ids()))

    def hook_started(self, kind: HookKind, name: str, subject: Any) -> None:
        if kind == "pre":
            self._step(PreHookStartedEvent(pre_hook_name=name, run_input=subject, **self._ids()))
        else:
            self._step(PostHookStartedEvent(post_hook_name=name, **self._ids()))

    def hook_completed(self, kind: HookKind, name: str, subject: Any) -> None:
        if kind == "pre":
            event: Any = PreHookCompletedEvent(pre_hook_name=name, run_input=subject, **self._ids())
        else:
            event = PostHookCompletedEvent(post_hook_name=name, **self._ids())
        self._step(event)

    def reasoning_started(self) -> None:
        self.thinking = []
        self._step(ReasoningStartedEvent(**self._ids()))

    def reasoning_completed(self) -> None:
        thinking, self.thinking = "".join(self.thinking or ()), None
        self._step(ReasoningCompletedEvent(content=thinking or None, **self._ids()))

    def model_request_started(self) -> None:
        model, provider = self.run.model or "", self.run.model_provider or ""
        self._step(ModelRequestStartedEvent(model=model, model_provider=provider, **self._ids()))

    def model_request_completed(self, metrics: ModelCallMetrics) -> None:
        self._step(
            ModelRequestCompletedEvent(
                model=self.run.model,
                model_provider=self.run.model_provider,
                input_tokens=metrics.input_tokens,
                output_tokens=metrics.output_tokens,
                total_tokens=metrics.input_tokens + metrics.output_tokens,
                time_to_first_token=metrics.time_to_first_token,
                reasoning_tokens=metrics.reasoning_tokens,
                **self._ids(),
            )
        )

    def parser_started(self) -> None:
        self._step(ParserModelResponseStartedEvent(**self._ids()))

    def announce(self, kind: type[BaseAgentRunEvent], **fields: Any) -> None:
        """A step's event of class ``kind`` with ``fields`` (the optional steps':
        compression, follow-ups)."""
        self._step(kind(**fields, **self._ids()))

    def parser_completed(self) -> None:
        self._step(ParserModelResponseCompletedEvent(**self._ids()))

    def custom(self, event: CustomEvent) -> None:
        """A tool's own event, named as the run's (Agno streams it with or without
        ``stream_events``)."""
        for name, value in self._ids().items():
            setattr(event, name, value)
        self._put(event)

    def content_completed(self) -> None:
        self._step(RunContentCompletedEvent(**self._ids()))

    def memory_started(self) -> None:
        self._step(MemoryUpdateStartedEvent(**self._ids()))

    def memory_completed(self, memories: list[Any] | None) -> None:
        self._step(MemoryUpdateCompletedEvent(memories=memories, **self._ids()))

    def summary_started(self) -> None:
        self._step(SessionSummaryStartedEvent(**self._ids()))

    def summary_completed(self, summary: Any) -> None:
        self._step(SessionSummaryCompletedEvent(session_summary=summary, **self._ids()))

    def text(self, delta: str) -> None:
        self._put(RunContentEvent(content=delta, **self._ids()))

    def media(self, piece: Any) -> None:
        """A piece of the reply's audio (``response_audio``) or an image (``image``)."""
        kind = "response_audio" if isinstance(piece, Audio) else "image"
        self._put(RunContentEvent(**{kind: piece}, **self._ids()))

    def reasoning(self, delta: str) -> None:
        if self.thinking is not None:  # the reasoning model's, before the run's model
            self.thinking.append(delta)
            self._step(ReasoningContentDeltaEvent(reasoning_content=delta, **self._ids()))
        else:
            self._put(RunContentEvent(reasoning_content=delta, **self._ids()))

    def tools_started(self, calls: list[ToolCall]) -> None:
        for call in calls:
            tool = ToolExecution(call.id, call.name, call.arguments)
            self._step(ToolCallStartedEvent(tool=tool, **self._ids()), content=True)

    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None:
        # the run records each execution (with its duration) just before its result
        tool = self.run.executions[-1]
        self._step(ToolCallCompletedEvent(tool=tool, content=message.text, **self._ids()), True)
        if error is not None:
            self._step(ToolCallErrorEvent(tool=tool, error=error, **self._ids()), content=True)

    def paused(self, message: Message) -> None:
        requirements = list(self.run.requirements)
        tools = [r.tool_execution for r in requirements]
        self._put(RunPausedEvent(tools=tools, requirements=requirements, **self._ids()))

    def completed(self) -> None:
        output = self.run.to_output()
        self._step(
            RunCompletedEvent(
                content=output.content,
                content_type=output.content_type,
                images=output.images,
                response_audio=output.response_audio,
                metadata=output.metadata,
                metrics=output.metrics,
                session_state=output.session_state,
                **self._ids(),
            ),
            content=True,
        )

    def failed(self, error: FerruleError) -> None:
        if self.run.status == "cancelled":
            self._put(RunCancelledEvent(reason=error.message, **self._ids()))
            return
        # a check names its trigger (Agno's error_id, which its other errors leave None)
        checks = (InputCheckError, OutputCheckError)
        self._put(
            RunErrorEvent(
                content=error.message,
                error_type=error.kind,
                error_id=error.error_id if isinstance(error, checks) else None,
                additional_data=error.to_dict(),
                error=error,
                **self._ids(),
            )
        )


class ContentEventSink(EventSink):
    """``run(input, stream=True)``: the content, and how the run stopped if not completed
    (paused, cancelled, failed); none of the steps."""

    steps = False

    def _step(self, event: Any, content: bool = False) -> None:
        pass
