"""The sync/async bridge: where a runtime's async code runs, and how sync code waits for it.

Write a method once, async, and derive its synchronous twin here (`blocking`,
`blocking_iter`); an object with such twins names its `Bridge` (``sync_bridge``, the
`Bridged` protocol), which is its runtime's::

    class Knowledge:
        @property
        def sync_bridge(self) -> Bridge:
            return self.runtime.sync_bridge

        @on_bridge_loop  # async callers from any event loop reach the runtime's loop
        async def asearch(self, query: str) -> list[Hit]: ...

        search = blocking(asearch)  # knowledge.search("q") waits for asearch on that loop

Two bridges: `LoopThread`, an event loop in a daemon thread started on first need (a
`Runtime`'s: components and async plugin code live there, so a synchronous caller, even
one inside a running loop as in Jupyter, just waits for results), and `CallerLoop`, the
event loop of whoever awaits (an `AsyncRuntime`'s: its sync twins raise `TypeError`
naming the async one). `_Pump` reads a stream ahead on the loop for a synchronous reader.

The loop serves every request of its Runtime, so nothing one plugin does may stop it: a
`SystemExit` or `KeyboardInterrupt` a callback lets out of the loop is logged and the loop
runs on, and a plugin that blocks the loop (an async plugin calling blocking code) is
reported by `Watchdog`, by name, once it has held the loop for
``FERRULE_LOOP_STALL_SECONDS`` (1 by default; 0 turns the watchdog off).
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

from ferrule_kernel import (
    FerruleError,
    Kernel,
    Prepared,
    RequestCancelledError,
    get_logger,
    interrupts_request,
)

if TYPE_CHECKING:
    import asyncio

log = get_logger("ferrule.runtime")

STALL_VARIABLE = "FERRULE_LOOP_STALL_SECONDS"

# asyncio is imported inside the methods that use it: a synchronous call of a plain
# operator never needs an event loop, and importing asyncio is a large part of a cold start.

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")


class Bridge:
    """Where async code runs: `run` / `stream` wait for it from synchronous code, `arun` /
    `astream` reach it from any event loop."""

    #: Whether synchronous code may wait here (False: the caller's own loop, `CallerLoop`).
    can_block: bool = True

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        raise NotImplementedError

    def stream(self, agen: AsyncIterator[T]) -> Iterator[T]:
        raise NotImplementedError

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        raise NotImplementedError

    def astream(self, agen: AsyncIterator[T]) -> AsyncIterator[T]:
        raise NotImplementedError


class CallerLoop(Bridge):
    """The event loop of whoever awaits (an `AsyncRuntime`'s): async code runs where it is
    awaited, and synchronous code cannot wait for it."""

    can_block = False

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        coro.close()
        raise TypeError("this runtime is an AsyncRuntime: await the async method instead")

    def stream(self, agen: AsyncIterator[T]) -> Iterator[T]:
        raise TypeError("this runtime is an AsyncRuntime: use `async for` instead")

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        return await coro

    def astream(self, agen: AsyncIterator[T]) -> AsyncIterator[T]:
        return agen


class Bridged(Protocol):
    """An object whose sync twins are derived with `blocking` / `blocking_iter`."""

    @property
    def sync_bridge(self) -> Bridge: ...


B = TypeVar("B", bound=Bridged)


def _refuse(owner: object, method: Callable[..., Any], how: str) -> TypeError:
    # a collaborator whose twins are another class's methods to users names that class
    kind = getattr(owner, "shown_as", None) or type(owner).__name__
    return TypeError(
        f"this {kind}'s runtime is an AsyncRuntime: use {how} {kind}.{method.__name__}() "
        "(or give it a Runtime)"
    )


def blocking(
    method: Callable[Concatenate[B, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[B, P], R]:
    """The synchronous twin of async ``method``: it runs ``method`` on ``self.sync_bridge``
    and waits for its result (``search = blocking(asearch)`` in a class body)."""

    @functools.wraps(method)
    def twin(self: B, /, *args: P.args, **kwargs: P.kwargs) -> R:
        bridge = self.sync_bridge
        if not bridge.can_block:
            raise _refuse(self, method, "await")
        return bridge.run(method(self, *args, **kwargs))

    return twin


def blocking_iter(
    method: Callable[Concatenate[B, P], AsyncIterator[R]],
) -> Callable[Concatenate[B, P], Iterator[R]]:
    """The synchronous twin of ``method``, which returns an async iterator: the items are
    produced on ``self.sync_bridge``'s loop, read ahead, and closing the returned iterator
    closes ``method``'s."""

    @functools.wraps(method)
    def twin(self: B, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[R]:
        bridge = self.sync_bridge
        if not bridge.can_block:
            raise _refuse(self, method, "async for ... in")
        return bridge.stream(method(self, *args, **kwargs))

    return twin


def on_bridge_loop(
    method: Callable[Concatenate[B, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[B, P], Coroutine[Any, Any, R]]:
    """``method``, run on ``self.sync_bridge``'s loop whichever event loop awaits it (the
    async twins of a `Runtime`'s objects are awaited from the caller's loop, while their
    components live on the runtime's)."""

    @functools.wraps(method)
    async def hop(self: B, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self.sync_bridge.arun(method(self, *args, **kwargs))

    return hop


class LoopThread(Bridge):
    """An event loop running forever in a daemon thread, started lazily; ``on_start`` is
    called once it runs."""

    def __init__(self, on_start: Callable[[], None] | None = None) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._watchdog: Watchdog | None = None
        self._lock = threading.Lock()
        self._stopping = False
        self._on_start = on_start

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        import asyncio

        with self._lock:
            if self._loop is None:
                if self._stopping:  # never started again: what runs here belongs to it
                    raise FerruleError("this Runtime was stopped; create a new one")
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    while not self._stopping:
                        try:
                            loop.run_forever()
                        except BaseException as exc:
                            # asyncio lets SystemExit / KeyboardInterrupt out of a callback
                            # (one a plugin scheduled): the loop serves other requests still.
                            log.warning(
                                "loop_callback_raised", error=f"{type(exc).__name__}: {exc}"
                            )
                        else:
                            return

                thread = threading.Thread(target=run, name="ferrule-runtime", daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
                self._watchdog = Watchdog.start(loop, thread)
                if self._on_start is not None:
                    self._on_start()
            return self._loop

    @property
    def started(self) -> bool:
        return self._loop is not None

    def in_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        import asyncio

        if self.in_loop_thread():
            coro.close()
            raise RuntimeError(
                "a synchronous Runtime method was called from its own loop; use the a* twin"
            )
        import concurrent.futures

        future = asyncio.run_coroutine_threadsafe(coro, self._loop_for(coro))
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            # Its task was cancelled on the loop (the Runtime stopped under it).
            raise RequestCancelledError("the request was cancelled") from None
        except BaseException:
            future.cancel()  # e.g. KeyboardInterrupt: stop the work too
            raise

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on this loop from any other loop."""
        import asyncio

        if self.in_loop_thread():
            return await coro
        loop = self._loop_for(coro)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))

    def _loop_for(self, coro: Coroutine[Any, Any, Any]) -> asyncio.AbstractEventLoop:
        """The loop, starting it if need be; ``coro`` is closed if there is none (stopped)."""
        try:
            return self.loop
        except BaseException:
            coro.close()
            raise

    def stream(self, agen: AsyncIterator[T]) -> Iterator[T]:
        """Iterate ``agen`` (which runs on this loop) from a synchronous caller.

        A pump task on the loop reads ahead into a bounded buffer and the caller takes
        whatever has arrived in one hand-off, instead of one thread hop per item. Closing
        the iterator cancels the pump, which closes ``agen`` before this returns.
        """
        import asyncio

        pump = _Pump(agen)
        loop = self.loop
        future = asyncio.run_coroutine_threadsafe(pump.run(), loop)
        try:
            while True:
                batch, finished, error = pump.take(loop)
                yield from batch
                if finished and not batch:
                    if error is not None:
                        raise error
                    return
        finally:
            if not future.done():
                future.cancel()
            pump.closed.wait(timeout=30)

    async def astream(self, agen: AsyncIterator[T]) -> AsyncIterator[T]:
        """Iterate ``agen`` (which runs on this loop) from any other event loop."""
        try:
            while True:
                try:
                    yield await self.arun(agen.__anext__())  # type: ignore[arg-type]
                except StopAsyncIteration:
                    return
        finally:
            if self._loop is not None and not self._loop.is_closed():
                await self.arun(agen.aclose())  # type: ignore[attr-defined]

    def stop(self) -> None:
        """Cancel what still runs (its callers get `RequestCancelledError`), then stop."""
        with self._lock:
            loop, thread, watchdog = self._loop, self._thread, self._watchdog
            self._loop = self._thread = self._watchdog = None
            self._stopping = True  # and never started again
        if loop is None:  # never started: nothing to cancel, and no asyncio to import
            return
        import asyncio
        import concurrent.futures

        if watchdog is not None:
            watchdog.stop()
        if loop is not None and thread is not None:
            try:
                asyncio.run_coroutine_threadsafe(_cancel_all(), loop).result(timeout=10)
            except (TimeoutError, concurrent.futures.TimeoutError):
                pass  # what does not end when cancelled is left to the daemon thread
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()


async def _cancel_all() -> None:
    import asyncio

    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=5)


class Watchdog:
    """Reports a loop that runs nothing else for ``after`` seconds, naming what holds it.

    A callback on the loop stamps the time every ``after / 2`` seconds; a thread checks
    the stamp as often, and when it is older than ``after`` logs ``loop_stalled`` with
    the request (and plugin) found on the stack of the loop's thread: that costs the loop
    one cheap callback per period and nothing per request. A stale stamp while the loop
    waits in its selector is not a stall: nothing holds the loop, its thread has not had
    the CPU (a busy machine, another thread holding the GIL) to run the stamp that is due.
    That is logged at debug level as ``loop_starved``, blaming no one.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, thread: threading.Thread, after: float):
        self.loop, self.thread, self.after = loop, thread, after
        self.beat = time.monotonic()
        self.stopped = threading.Event()
        self.reported: float | None = None  # the stale stamp last reported
        self.starved: float | None = None  # the stale stamp last found with the loop idle

    @classmethod
    def start(cls, loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> Watchdog | None:
        try:
            after = float(os.environ.get(STALL_VARIABLE) or 1.0)
        except ValueError:
            after = 1.0
        if after <= 0:
            return None
        watchdog = cls(loop, thread, after)
        loop.call_soon_threadsafe(watchdog._tick)
        threading.Thread(
            target=watchdog._watch, name="ferrule-runtime-watchdog", daemon=True
        ).start()
        return watchdog

    def _tick(self) -> None:
        self.beat = time.monotonic()
        if not self.stopped.is_set():
            self.loop.call_later(self.after / 2, self._tick)

    def _watch(self) -> None:
        while not self.stopped.wait(self.after / 2):
            self.check()

    def check(self) -> None:
        """One look at the stamp (the watch thread's, every ``after / 2`` seconds)."""
        beat = self.beat
        stalled = time.monotonic() - beat
        if stalled < self.after or beat == self.reported:
            return
        frame = sys._current_frames().get(self.thread.ident or 0)
        if _waiting_in_selector(frame):
            if beat != self.starved:
                self.starved = beat
                log.debug("loop_starved", seconds=round(stalled, 1))
            return  # looked at again next period: code may hold the loop by then
        self.reported = beat
        target, plugin, where = _holding(frame)
        log.warning(
            "loop_stalled",
            seconds=round(stalled, 1),
            target=target,
            plugin=plugin,
            where=where,
            hint="an async plugin is running blocking code on the event loop"
            if plugin is not None
            else "code on the event loop is blocking it (a blocking call in async code)",
        )

    def stop(self) -> None:
        self.stopped.set()


def _waiting_in_selector(frame: Any) -> bool:
    """Whether the loop whose innermost frame this is runs its own code (its selector's
    wait, the bookkeeping around it) rather than a callback: asyncio's loop turn
    (``BaseEventLoop._run_once``) is reached, going outwards, before any callback's run
    (``Handle._run``). A loop with no Python frames of its own (uvloop) never counts as
    waiting."""
    import asyncio

    # (asyncio's pure-Python loop, named by code: its private methods have no public name)
    loop_turn = (asyncio.base_events.__file__, "_run_once")
    callback = (asyncio.events.__file__, "_run")
    while frame is not None:
        where = (frame.f_code.co_filename, frame.f_code.co_name)
        if where == callback:
            return False
        if where == loop_turn:
            return True
        frame = frame.f_back
    return False


def _holding(frame: Any) -> tuple[str | None, str | None, str | None]:
    """The request and plugin whose code the loop's thread (its innermost ``frame``) runs
    now, and where: the line the plugin's code is at (the innermost line when no request is
    found)."""
    innermost, callee = frame, None
    while frame is not None:
        code, scope = frame.f_code, frame.f_locals
        owner = scope.get("self")
        if isinstance(owner, Prepared):
            return owner.label, owner.provider, _line(callee or innermost)
        if code is Kernel.define.__code__ and "entry" in scope:
            return scope.get("label"), scope["entry"].provider, _line(callee or innermost)
        if code is Kernel.delete.__code__ and "component" in scope:
            component = scope["component"]
            where = _line(callee or innermost)
            return f"delete {component.name!r}", component.entry.provider, where
        callee, frame = frame, frame.f_back
    return None, None, _line(innermost)


def _line(frame: Any) -> str | None:
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else None


class _Pump:
    """Reads an async iterator ahead on the loop into a buffer a synchronous caller drains.

    The buffer is bounded (``LIMIT`` items) so a fast producer cannot run far ahead of a
    slow reader; the pump waits until the reader has taken what is there.
    """

    LIMIT = 256

    def __init__(self, agen: AsyncIterator[Any]) -> None:
        from collections import deque

        self.agen = agen
        self.items: deque[Any] = deque()
        self.cond = threading.Condition()
        self.finished = False
        self.error: BaseException | None = None
        self.waiting = False  # the pump waits for room; the reader must wake it
        self.closed = threading.Event()
        self.room: asyncio.Event | None = None

    async def run(self) -> None:
        import asyncio

        self.room = asyncio.Event()
        try:
            async for item in self.agen:
                with self.cond:
                    self.items.append(item)
                    self.cond.notify()
                    full = len(self.items) >= self.LIMIT
                    if full:
                        self.waiting = True
                        self.room.clear()
                if full:
                    await self.room.wait()
        except BaseException as exc:
            if interrupts_request(exc):  # cancelled: by the reader leaving, or by stop()
                self.error = RequestCancelledError("the stream was cancelled")
                raise
            # Anything else ends the reader's stream with an error, never as if complete; a
            # BaseException reaches the reader as an error, not as its own Ctrl-C or exit.
            if isinstance(exc, Exception):
                self.error = exc
            else:
                self.error = FerruleError(f"the stream failed: {type(exc).__name__}: {exc}")
                self.error.__cause__ = exc
        finally:
            try:
                await self.agen.aclose()  # type: ignore[attr-defined]
            finally:
                with self.cond:
                    self.finished = True
                    self.cond.notify()
                self.closed.set()

    def take(self, loop: asyncio.AbstractEventLoop) -> tuple[list[Any], bool, BaseException | None]:
        """Wait for items (or the end); return them all, whether the stream ended, and its error."""
        with self.cond:
            while not self.items and not self.finished:
                self.cond.wait()
            batch = list(self.items)
            self.items.clear()
            # A finished pump waits for no room (and its loop may be closed by now: the
            # runtime stopped while the reader still held items).
            if self.waiting and self.room is not None and not self.finished:
                self.waiting = False
                try:
                    loop.call_soon_threadsafe(self.room.set)
                except RuntimeError:  # the loop closed under a pump that never ended
                    self.finished = True
                    self.error = self.error or RequestCancelledError("the stream was cancelled")
            return batch, self.finished, self.error
