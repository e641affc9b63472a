"""`AgentStream`: one run as its caller reads it, with ``for`` or ``async for``, or awaited
for its `RunOutput`. It starts the run on its `Launch`'s loop (the runtime's loop thread,
or the caller's loop on an `AsyncRuntime`), reads the run's `sinks.Channel`, and stops the
run when the reader leaves early; `started_run` finds any run of this process by id, and
`cancel_by_id` cancels one through the installed cancellation manager."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import attrs
from ferrule_kernel import FerruleError

from .._bridge import Bridge, LoopThread
from .cancellation import installed_manager
from .failed_runs import raise_failed, refused_call
from .results import OutputT, RunOutput
from .sinks import END, Channel, Failure, MessageSink, Sink
from .state import RunState, cancel_in_loop, request_cancel

T = TypeVar("T")


@attrs.frozen
class Launch:
    """How a stream starts its run: the agent's bridge (where it runs), the agent's table of
    running runs, and the turn loop bound to the agent's run deps."""

    bridge: Bridge
    runs: dict[str, RunState]
    drive: Callable[[RunState, Sink], Coroutine[Any, Any, None]]

    @property
    def thread(self) -> LoopThread | None:
        """The runtime's loop thread (None: an `AsyncRuntime`, runs live on the caller's loop)."""
        return self.bridge if isinstance(self.bridge, LoopThread) else None

    def wait(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the bridge's loop and wait for it (synchronous callers)."""
        if not self.bridge.can_block:
            coro.close()
            raise TypeError(ASYNC_ONLY)
        return self.bridge.run(coro)


#: Why a synchronous call cannot wait on an agent whose runtime is an `AsyncRuntime`.
ASYNC_ONLY = (
    "this agent's runtime is an AsyncRuntime: use `async for` and the a* methods "
    "(or give the agent a Runtime)"
)


class AgentStream(Generic[T, OutputT]):
    """The stream of one run: iterate it with ``for`` or ``async for`` (once), for its
    items of type ``T``; its `RunOutput` holds an ``OutputT``.

    `output` is the `RunOutput` (complete once the iteration ended); `result` /
    `aresult` drain the stream and return it, and so does ``await stream``: for a run of
    Agno's (``await agent.arun(...)``, ``acontinue_run``) however it ended, as Agno's
    (`failed_runs`: a failed run's status is ``error``, its typed error in ``error``);
    for a query or a run of messages, raising the typed error of a failed run instead.
    `cancel` stops the run from any thread.
    """

    def __init__(self, launch: Launch, run: RunState, sink: type[Sink]) -> None:
        self._launch_with = launch
        self._run = run
        self._sink_type = sink
        self._iterated = False
        self._finished = False
        #: Yield the `RunOutput` after the last item (Agno's ``yield_run_output``).
        self.yield_run_output = False

    @property
    def run_id(self) -> str:
        return self._run.id

    @property
    def output(self) -> RunOutput[OutputT]:
        return self._run.to_output()

    def __repr__(self) -> str:
        return f"<AgentStream run_id={self._run.id!r} status={self._run.status!r}>"

    if not TYPE_CHECKING:  # at run time only: type checkers know a stream's attributes

        def __getattr__(self, name: str) -> Any:
            missing = f"'AgentStream' object has no attribute {name!r}"
            if name.startswith("_"):
                raise AttributeError(missing)
            # Ailoy 0.2's run of Agent(lm), read as its README reads it: run(...).contents
            if name in _AILOY_OUTPUT_NAMES and issubclass(self._sink_type, MessageSink):
                raise AttributeError(
                    f"{missing}: Ailoy 0.2's run streams one MessageOutput per message. "
                    "Iterate it: `async for resp in agent.run(...)` or `for resp in "
                    f"agent.run_sync(...)`, then `resp.message.{name}`"
                )
            if not hasattr(RunOutput, name):
                raise AttributeError(missing)
            raise AttributeError(
                f"'AgentStream' object has no attribute {name!r}: this run is a stream "
                "(an agent built as Ailoy 0.2's Agent(lm) streams from run()). Read it with "
                "`for` / `async for`, or take its RunOutput with `stream.result()` (`await "
                f"stream` in async code), then `.{name}`; for Agno's run, which returns "
                "the RunOutput, give the model by keyword: Agent(model=lm)"
            )

    # -- driving --------------------------------------------------------------------------

    def _claim(self) -> None:
        if self._iterated:
            raise RuntimeError("an AgentStream can be iterated once")
        self._iterated = True

    def _launch(self) -> Channel:
        """Start the run on its loop (without waiting for it) and return its channel."""
        thread = self._launch_with.thread
        loop = asyncio.get_running_loop() if thread is None else thread.loop
        channel = Channel(loop)
        if thread is None or thread.in_loop_thread():
            self._start(loop, channel)
        else:
            loop.call_soon_threadsafe(self._start, loop, channel)
        return channel

    def _start(self, loop: asyncio.AbstractEventLoop, channel: Channel) -> None:
        run = self._run
        self._launch_with.runs[run.id] = run
        _STARTED[run.id] = run
        run.loop = loop
        run.task = loop.create_task(self._launch_with.drive(run, self._sink_type(channel, run)))

    async def _abandon(self) -> None:
        cancel_in_loop(self._run)
        task = self._run.task
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=5)

    def _items(self, batch: list[Any]) -> Iterator[Any]:
        for item in batch:
            if item is END:
                self._finished = True
                return
            if isinstance(item, Failure):
                self._finished = True
                raise item.error
            yield item

    def __iter__(self) -> Generator[T, None, None]:
        launch = self._launch_with
        if launch.thread is None:
            raise TypeError(ASYNC_ONLY)
        if launch.thread.in_loop_thread():
            raise RuntimeError(
                "a run was iterated synchronously on its runtime's loop; use `async for`"
            )
        self._claim()
        channel = self._launch()
        try:
            while not self._finished:
                yield from self._items(channel.take_blocking())
            if self.yield_run_output:
                yield self.output  # type: ignore[misc]
        finally:
            if not self._finished:
                launch.wait(self._abandon())

    def __aiter__(self) -> AsyncIterator[T]:
        self._claim()
        return self._aiterate()

    async def _aiterate(self) -> AsyncIterator[T]:
        bridge = self._launch_with.bridge
        channel = self._launch()
        try:
            while not self._finished:
                for item in self._items(await channel.take()):
                    yield item
            if self.yield_run_output:
                yield self.output  # type: ignore[misc]
        finally:
            if not self._finished:
                await bridge.arun(self._abandon())

    def result(self) -> RunOutput[OutputT]:
        """Run to the end (if not iterated yet) and return the `RunOutput`."""
        if not self._iterated:
            items = iter(self)
            try:
                for _ in items:
                    pass
            except FerruleError:
                pass  # recorded in the output
            finally:  # left early (Ctrl-C between two items): the run is stopped now
                items.close()
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
        return self._awaited().__await__()

    async def _awaited(self) -> RunOutput[OutputT]:
        output = await self.aresult()
        if self._run.kind.returns_output:  # Agno's arun: a failed run's output too
            return refused_call(output)
        return raise_failed(output)

    def cancel(self) -> None:
        """Stop the run (from any thread or task); its stream ends with a cancellation error."""
        request_cancel(self._run)


#: What Ailoy 0.2 code reads from a finished message (``MessageOutput.message``), asked of
#: the stream itself: its README's ``response = agent.run(...)``, ``response.contents``.
_AILOY_OUTPUT_NAMES = frozenset({"contents", "message", "role", "thinking", "tool_calls"})


#: The runs started in this process, by id, for the static `Agent.cancel_run`; weak, so
#: that a run is kept only by its agent and its stream.
_STARTED: weakref.WeakValueDictionary[str, RunState] = weakref.WeakValueDictionary()


def started_run(run_id: str) -> RunState | None:
    """A run of any agent of this process, if it is still referenced."""
    return _STARTED.get(run_id)


def running_runs() -> dict[str, RunState]:
    """The runs of this process's agents that are running now, by id."""
    return {run_id: run for run_id, run in list(_STARTED.items()) if run.status == "running"}


def stop_started(run_id: str) -> bool:
    """Stop a running run of this process at once (from any thread); False if none runs."""
    run = started_run(run_id)
    if run is None or run.status != "running":
        return False
    request_cancel(run)
    return True


def cancel_by_id(run_id: str) -> bool:
    """Cancel ``run_id`` through the installed cancellation manager (which another process
    may be reading), and stop it at once if it runs here, even when the manager fails (its
    error then reaches the caller). True when the manager knew the id or the run was
    stopped; an id unknown to both keeps the manager's record, for a run started later."""
    try:
        known = installed_manager().cancel_run(run_id)
    finally:
        stopped = stop_started(run_id)
    return known or stopped


async def acancel_by_id(run_id: str) -> bool:
    """`cancel_by_id` through the manager's async twin."""
    try:
        known = await installed_manager().acancel_run(run_id)
    finally:
        stopped = stop_started(run_id)
    return known or stopped
