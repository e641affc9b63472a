"""The execution engine: drives one validated request (`Prepared`) to its output.

A `Prepared` request runs on the event loop (`run` / `stream`) or, for plain sync code and
a sync caller, in the caller's own thread (`run_inline` / `stream_inline`), so a
synchronous script pays no thread hop for a trivial operator. Sync code marked blocking
runs in a worker thread; a stream's producer is closed as soon as its consumer leaves.
Whatever the plugin raises is judged where it ran (`failures.request_failure`) and every
output is checked (`outputs.check_output`).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any

import attrs

from .failures import request_failure
from .log import get_logger
from .outputs import check_output, invalid_output
from .validation import type_name

# asyncio is imported where it is used: a synchronous caller of a plain operator never
# needs it, and it costs a large part of a cold start.

log = get_logger("ferrule.kernel")

_END = object()


@attrs.define(slots=True, eq=False)
class Prepared:
    """A validated request, ready to run: the implementation, its argument and how to drive it."""

    label: str
    provider: str
    fn: Callable[..., Any]
    arg: Any
    kind: str  # discovery.call_kind
    blocking: bool
    streaming: bool
    #: The spec's converter; None: the kernel's (`default_converter`).
    converter: Any = None
    #: The declared output type (each item's, for a stream), or None: a JSON object.
    outputs: Any = None

    @property
    def inline(self) -> bool:
        """True when a sync caller may run this in its own thread (plain sync code)."""
        return self.kind in ("sync", "sync_gen")

    def _fail(self, exc: BaseException) -> BaseException:
        return request_failure(self.label, self.provider, exc)

    def _output(self, value: Any) -> dict[str, Any]:
        # (a JSON value other than an object where the description declares one)
        out: dict[str, Any] = check_output(
            value, self.label, self.provider, self.converter, self.outputs
        )
        return out

    def _call(self) -> Any:
        """Run the implementation in this thread (the caller's, the loop's or a worker's):
        what it raises is judged here, where a Ctrl-C can be told from the plugin's own."""
        try:
            return self.fn(self.arg)
        except BaseException as exc:
            raise self._fail(exc)  # noqa: B904 (the cause is set by plugin_error)

    def run_inline(self) -> dict[str, Any]:
        return self._output(self._call())

    async def run(self) -> dict[str, Any]:
        if self.kind == "async":
            try:
                result = await self.fn(self.arg)
            except BaseException as exc:
                raise self._fail(exc)  # noqa: B904 (the cause is set by plugin_error)
        elif self.blocking:
            import asyncio

            result = await asyncio.to_thread(self._call)
        else:
            result = self._call()
        return self._output(result)

    def _iterator(self, items: Any) -> Iterator[Any]:
        try:
            return iter(items)
        except TypeError:
            message = f"expected a stream of objects, got {type_name(items)}"
            raise invalid_output(self.label, self.provider, [{"path": "$", "message": message}])  # noqa: B904

    def stream_inline(self) -> Iterator[dict[str, Any]]:
        return self._iterate(self._iterator(self._call()))

    def _close(self, items: Any) -> None:
        """Close a sync producer; what closing raises is the plugin's failure."""
        close = getattr(items, "close", None)
        if close is not None:
            try:
                close()
            except BaseException as exc:
                raise self._fail(exc)  # noqa: B904 (the cause is set by plugin_error)

    def _close_failed(self, exc: Exception) -> None:
        # The stream already ends (with an error, or its consumer left): a producer that
        # also fails to close is logged, not raised over that ending.
        log.warning(
            "producer_close_failed", target=self.label, plugin=self.provider, error=str(exc)
        )

    def _iterate(self, items: Iterator[Any]) -> Iterator[dict[str, Any]]:
        try:
            while True:
                try:
                    item = next(items)
                except StopIteration:
                    break
                except BaseException as exc:
                    raise self._fail(exc)  # noqa: B904 (the cause is set by plugin_error)
                yield self._output(item)
        except BaseException:
            try:
                self._close(items)
            except Exception as exc:
                self._close_failed(exc)
            raise
        self._close(items)

    async def open(self) -> AsyncGenerator[dict[str, Any], None]:
        """`stream`, as the sdk's transport protocol starts a stream (a remote one fails
        here, before its first item; this one is checked already)."""
        return self.stream()

    async def stream(self) -> AsyncGenerator[dict[str, Any], None]:
        source: AsyncGenerator[dict[str, Any], None]
        if self.kind in ("sync_gen", "sync") and self.blocking:
            source = self._stream_threaded()
        else:
            items = self._call()
            if inspect.isawaitable(items):
                try:
                    items = await items
                except BaseException as exc:
                    raise self._fail(exc)  # noqa: B904 (the cause is set by plugin_error)
            if hasattr(items, "__aiter__"):
                source = self._stream_async(items.__aiter__())
            else:
                source = _aiter_sync(self._iterate(self._iterator(items)))
        try:
            async for item in source:
                yield item
        finally:
            await source.aclose()  # close the producer now, not when garbage-collected

    async def _aclose(self, agen: Any) -> None:
        aclose = getattr(agen, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except BaseException as exc:
                raise self._fail(exc)  # noqa: B904 (the cause is set by plugin_error)

    async def _stream_async(self, agen: AsyncIterator[Any]) -> AsyncGenerator[dict[str, Any], None]:
        try:
            while True:
                try:
                    item = await agen.__anext__()
                except StopAsyncIteration:
                    break
                except BaseException as exc:
                    raise self._fail(exc)  # noqa: B904 (the cause is set by plugin_error)
                yield self._output(item)
        except BaseException:
            try:
                await self._aclose(agen)
            except Exception as exc:
                self._close_failed(exc)
            raise
        await self._aclose(agen)

    async def _stream_threaded(self) -> AsyncGenerator[dict[str, Any], None]:
        # One thread hop per item: the producer never runs ahead of the consumer, so
        # closing or cancelling the stream stops it before its next item.
        import asyncio
        import threading

        loop = asyncio.get_running_loop()
        items = self._iterator(await loop.run_in_executor(None, self._call))
        # A cancelled consumer leaves a step running in its thread; a generator cannot be
        # closed while it runs, so closing waits for that step to finish.
        lock = threading.Lock()

        def step() -> Any:
            with lock:
                try:
                    return next(items, _END)
                except BaseException as exc:  # judged in the worker thread that ran it
                    raise self._fail(exc)  # noqa: B904 (the cause is set by plugin_error)

        def close_items() -> None:
            with lock:
                self._close(items)

        try:
            while True:
                item = await loop.run_in_executor(None, step)
                if item is _END:
                    break
                yield self._output(item)
        except BaseException:
            try:
                await loop.run_in_executor(None, close_items)
            except Exception as exc:
                self._close_failed(exc)
            raise
        await loop.run_in_executor(None, close_items)


async def _aiter_sync(items: Iterator[dict[str, Any]]) -> AsyncGenerator[dict[str, Any], None]:
    try:
        for item in items:
            yield item
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()


__all__ = ["Prepared"]
