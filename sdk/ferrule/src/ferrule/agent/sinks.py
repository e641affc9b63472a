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
from typing import Any

import attrs
from ferrule_kernel import FerruleError
from ferrule_kit.messages import Message, ToolCall, ValuePart, converter
from ferrule_kit.storage import ToolExecution

from .deltas import (
    FinishReason,
    MessageDelta,
    MessageDeltaOutput,
    PartDelta,
    PartDeltaFunction,
    finish_reason_of,
)
from .events import (
    RunCompletedEvent,
    RunContentEvent,
    RunErrorEvent,
    RunPausedEvent,
    RunStartedEvent,
    ToolCallCompletedEvent,
    ToolCallStartedEvent,
)
from .results import (
    AgentResponse,
    MessageOutput,
    ResponseContent,
    ResponseType,
    ToolConfirmation,
)
from .state import RunState


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

    def __init__(self, channel: Channel, run: RunState) -> None:
        self.channel = channel
        self.run = run
        self.first = True

    def _put(self, item: Any) -> None:
        if self.first:
            self.first = False
            if self.run.metrics.time_to_first_token is None:
                self.run.metrics.time_to_first_token = (
                    self.run.elapsed + time.perf_counter() - self.run.started
                )
        self.channel.put(item)

    def started(self) -> None: ...
    def text(self, delta: str) -> None: ...
    def reasoning(self, delta: str) -> None: ...
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
    """``run(input, stream=True, stream_events=True)``: every event above."""

    def _ids(self) -> dict[str, Any]:
        context = self.run.session
        return {
            "run_id": self.run.id,
            "agent_id": context.agent_id if context else None,
            "session_id": context.session_id if context else None,
        }

    def started(self) -> None:
        self.channel.put(RunStartedEvent(**self._ids()))

    def text(self, delta: str) -> None:
        self._put(RunContentEvent(content=delta, **self._ids()))

    def reasoning(self, delta: str) -> None:
        self._put(RunContentEvent(reasoning_content=delta, **self._ids()))

    def tools_started(self, calls: list[ToolCall]) -> None:
        for call in calls:
            tool = ToolExecution(call.id, call.name, call.arguments)
            self._put(ToolCallStartedEvent(tool=tool, **self._ids()))

    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None:
        # the run records each execution (with its duration) just before its result
        self._put(ToolCallCompletedEvent(tool=self.run.executions[-1], **self._ids()))

    def paused(self, message: Message) -> None:
        self._put(RunPausedEvent(requirements=list(self.run.requirements), **self._ids()))

    def completed(self) -> None:
        output = self.run.to_output()
        self._put(
            RunCompletedEvent(
                content=output.content,
                content_type=output.content_type,
                metrics=output.metrics,
                session_state=output.session_state,
                **self._ids(),
            )
        )

    def failed(self, error: FerruleError) -> None:
        self._put(RunErrorEvent(content=error.message, error=error, **self._ids()))


class ContentEventSink(EventSink):
    """``run(input, stream=True)``: the content, and how the run stopped if not completed."""

    def started(self) -> None:
        pass

    def tools_started(self, calls: list[ToolCall]) -> None:
        pass

    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None:
        pass

    def completed(self) -> None:
        pass
