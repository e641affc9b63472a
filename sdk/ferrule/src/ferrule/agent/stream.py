"""How a run's outputs reach its caller: the run's state (`_Run`), the channel its
outputs cross threads and loops through (`_Channel`), the sinks that turn its events into
`AgentResponse`s or `MessageOutput`s, the loop it runs on (`_Home`), `AgentStream`, and
cancellation from any thread or task."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import attrs
from ferrule_kernel import FerruleError
from ferrule_kit.lm import Reasoning
from ferrule_kit.messages import Message, ToolCall, converter
from ferrule_kit.storage import ToolExecution

from ..runtime import Runtime
from .context import RunContext
from .output_schema import _StructuredOutput
from .results import (
    AgentResponse,
    MessageOutput,
    OutputT,
    ResponseType,
    RunMetrics,
    RunOutput,
    RunStatus,
    ToolConfirmation,
)
from .usage import UsageLimits

if TYPE_CHECKING:
    from .agent import Agent

T = TypeVar("T")


@attrs.define(eq=False)
class _Run:
    id: str
    #: What started it: `Agent.query` (responses), `Agent.run` on a whole history
    #: (messages) or on one input (a `RunOutput`, or events).
    kind: Literal["query", "run", "input"]
    #: Everything the model sees: system message, history, this run's messages.
    messages: list[Message]
    #: Index of this run's first new message in ``messages``.
    first_new: int
    reasoning: Reasoning
    output: _StructuredOutput | None
    tool_call_limit: int | None
    status: RunStatus = "running"
    content: Any = None
    error: FerruleError | None = None
    metrics: RunMetrics = attrs.Factory(RunMetrics)
    wire: list[dict[str, Any]] = attrs.Factory(list)  # ``messages`` on the wire, as far as sent
    tool_calls_made: int = 0
    pending: list[ToolCall] = attrs.Factory(list)  # the paused turn's calls
    requirements: list[ToolConfirmation] = attrs.Factory(list)
    started: float = attrs.Factory(time.perf_counter)
    elapsed: float = 0.0  # of earlier legs (before a pause)
    running: bool = False
    cancel_requested: bool = False
    task: asyncio.Task[None] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    #: The session it runs in (None for a single step).
    context: RunContext | None = None
    executions: list[ToolExecution] = attrs.Factory(list)  # the tool calls run, in order
    usage_limits: UsageLimits | None = None
    #: What the caller passed as ``deps``, for the tools (`ToolContext.deps`).
    deps: Any = None
    #: Tool name -> the times it raised `ModelRetry` so far.
    retries: dict[str, int] = attrs.Factory(dict)
    #: What the caller passed, and the files with it: the pre-hooks' `RunInput`.
    input: Any = None
    files: Sequence[Any] = ()

    def to_output(self) -> RunOutput[Any]:
        context = self.context
        output = RunOutput(
            self.id,
            self.status,
            self.content,
            list(self.messages[self.first_new :]),
            self.metrics,
            list(self.requirements) if self.status == "paused" else [],
            self.error,
        )
        if context is not None:
            output.agent_id, output.session_id = context.agent_id, context.session_id
            output.user_id, output.content_type = context.user_id, context.content_type
            output.session_state, output.metadata = context.session_state, dict(context.metadata)
            output.references = list(context.references) or None
        return output


class _Channel:
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


class _Sink:
    """Turns a run's events into what its stream yields, through ``channel``."""

    def __init__(self, channel: _Channel, run: _Run) -> None:
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


class _ResponseSink(_Sink):
    """`query`: `AgentResponse` deltas with ``is_type_switched`` tracked."""

    def __init__(self, channel: _Channel, run: _Run) -> None:
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
            self._emit("tool_call", "assistant", converter.unstructure(call))

    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None:
        content: dict[str, Any] = {"tool_call_id": message.tool_call_id, "name": name}
        if error is None:
            content["result"] = result
        else:
            content["error"] = error
        self._emit("tool_call_result", "tool", content)

    def paused(self, message: Message) -> None:
        content = {
            "run_id": self.run.id,
            "requirements": [r.to_dict() for r in self.run.requirements],
        }
        self._emit("paused", "assistant", content)

    def failed(self, error: FerruleError) -> None:
        self._emit("error", "assistant", error.message, error)


class _SilentReasoningSink(_ResponseSink):
    """`query` with ``ignore_reasoning_messages``: the model reasons, nobody sees it."""

    def reasoning(self, delta: str) -> None:
        pass


class _MessageSink(_Sink):
    """`run`: one `MessageOutput` per finished message; a failure raises from the iterator."""

    def assistant(
        self, message: Message, usage: dict[str, int] | None, requirements: list[ToolConfirmation]
    ) -> None:
        self._put(MessageOutput(message, usage, tuple(requirements)))

    def tool_result(self, message: Message, name: str, result: Any, error: str | None) -> None:
        self._put(MessageOutput(message))

    def paused(self, message: Message) -> None:
        pass  # the assistant message carried the requirements

    def failed(self, error: FerruleError) -> None:
        self._put(_Failure(error))


@attrs.frozen
class _Failure:
    error: FerruleError


_END = object()


class _Home:
    """Where runs execute: the `Runtime`'s loop thread, or the caller's loop (`AsyncRuntime`)."""

    def __init__(self, runtime: Any) -> None:
        self.thread = runtime._loop if isinstance(runtime, Runtime) else None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self.thread is None:
            coro.close()
            raise TypeError(
                "this agent's runtime is an AsyncRuntime: use `async for` and the a* methods "
                "(or give the agent a Runtime)"
            )
        return self.thread.run(coro)

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        if self.thread is None:
            return await coro
        return await self.thread.arun(coro)


class AgentStream(Generic[T, OutputT]):
    """The stream of one run: iterate it with ``for`` or ``async for`` (once), for its
    items of type ``T``; its `RunOutput` holds an ``OutputT``.

    `output` is the `RunOutput` (complete once the iteration ended); `result` /
    `aresult` drain the stream and return it, and so does ``await stream``, which raises
    the typed error of a failed run instead. `cancel` stops the run from any thread.
    """

    def __init__(self, agent: Agent, run: _Run, sink: type[_Sink]) -> None:
        self._agent = agent
        self._run = run
        self._sink_type = sink
        self._iterated = False
        self._finished = False

    @property
    def run_id(self) -> str:
        return self._run.id

    @property
    def output(self) -> RunOutput[OutputT]:
        return self._run.to_output()

    def __repr__(self) -> str:
        return f"<AgentStream run_id={self._run.id!r} status={self._run.status!r}>"

    # -- driving --------------------------------------------------------------------------

    def _claim(self) -> None:
        if self._iterated:
            raise RuntimeError("an AgentStream can be iterated once")
        self._iterated = True

    def _launch(self) -> _Channel:
        """Start the run on its home loop (without waiting for it) and return its channel."""
        thread = self._agent._home.thread
        loop = asyncio.get_running_loop() if thread is None else thread.loop
        channel = _Channel(loop)
        if thread is None or thread.in_loop_thread():
            self._start(loop, channel)
        else:
            loop.call_soon_threadsafe(self._start, loop, channel)
        return channel

    def _start(self, loop: asyncio.AbstractEventLoop, channel: _Channel) -> None:
        run = self._run
        self._agent._runs[run.id] = run
        _STARTED[run.id] = run
        run.loop = loop
        run.task = loop.create_task(self._agent._drive(run, self._sink_type(channel, run)))

    async def _abandon(self) -> None:
        _cancel_in_loop(self._run)
        task = self._run.task
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=5)

    def _items(self, batch: list[Any]) -> Iterator[Any]:
        for item in batch:
            if item is _END:
                self._finished = True
                return
            if isinstance(item, _Failure):
                self._finished = True
                raise item.error
            yield item

    def __iter__(self) -> Iterator[T]:
        home = self._agent._home
        if home.thread is None:
            raise TypeError(
                "this agent's runtime is an AsyncRuntime: use `async for` and the a* methods "
                "(or give the agent a Runtime)"
            )
        if home.thread.in_loop_thread():
            raise RuntimeError(
                "a run was iterated synchronously on its runtime's loop; use `async for`"
            )
        self._claim()
        channel = self._launch()
        try:
            while not self._finished:
                yield from self._items(channel.take_blocking())
        finally:
            if not self._finished:
                home.run(self._abandon())

    def __aiter__(self) -> AsyncIterator[T]:
        self._claim()
        return self._aiterate()

    async def _aiterate(self) -> AsyncIterator[T]:
        home = self._agent._home
        channel = self._launch()
        try:
            while not self._finished:
                for item in self._items(await channel.take()):
                    yield item
        finally:
            if not self._finished:
                await home.arun(self._abandon())

    def result(self) -> RunOutput[OutputT]:
        """Run to the end (if not iterated yet) and return the `RunOutput`."""
        if not self._iterated:
            try:
                for _ in self:
                    pass
            except FerruleError:
                pass  # recorded in the output
        return self.output

    async def aresult(self) -> RunOutput[OutputT]:
        if not self._iterated:
            try:
                async for _ in self:
                    pass
            except FerruleError:
                pass
        return self.output

    def __await__(self) -> Generator[Any, None, RunOutput[OutputT]]:
        return self._raising().__await__()

    async def _raising(self) -> RunOutput[OutputT]:
        output = await self.aresult()
        if output.status == "error" and output.error is not None:
            raise output.error
        return output

    def cancel(self) -> None:
        """Stop the run (from any thread or task); its stream ends with a cancellation error."""
        _request_cancel(self._run)


#: The runs started in this process, by id, for the static `Agent.cancel_run`; weak, so
#: that a run is kept only by its agent and its stream.
_STARTED: weakref.WeakValueDictionary[str, _Run] = weakref.WeakValueDictionary()


def started_run(run_id: str) -> _Run | None:
    """A run of any agent of this process, if it is still referenced."""
    return _STARTED.get(run_id)


def _cancel_in_loop(run: _Run) -> None:
    run.cancel_requested = True
    if run.running and run.task is not None and not run.task.done():
        run.task.cancel()


def _request_cancel(run: _Run) -> None:
    loop = run.loop
    if loop is None or loop.is_closed():
        run.cancel_requested = True  # not started yet: it stops at its first step
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        _cancel_in_loop(run)
    else:
        loop.call_soon_threadsafe(_cancel_in_loop, run)
