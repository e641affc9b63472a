"""One replica: the Ray actor that builds a component in its own process and runs its
methods. This module is imported in the actor's worker (and by the driver, for the
class); Ray is applied to `ComponentHost` by `ferrule_ray.component`."""

from __future__ import annotations

import asyncio
import inspect
import os
import pickle
import uuid
from collections.abc import AsyncGenerator
from typing import Any

import attrs
from ferrule_kernel import Kernel, get_logger

log = get_logger("ferrule.ray")

_END = object()


@attrs.frozen
class Failure:
    """What a method raised in the actor, carried back as a value: Ray's own task-error
    path would log a traceback on the driver and lose the exception's type when it does
    not pickle. ``error`` is the exception when it pickles and is an `Exception`;
    otherwise ``type_name`` and ``text`` rebuild one of that name."""

    type_name: str
    text: str
    error: Exception | None = None

    @classmethod
    def of(cls, exc: BaseException) -> Failure:
        portable: Exception | None = None
        if isinstance(exc, Exception):
            try:
                pickle.loads(pickle.dumps(exc))
                portable = exc
            except Exception:  # an exception whose state does not pickle: keep its text
                portable = None
        try:
            text = str(exc)
        except Exception:
            text = "<unprintable>"
        return cls(type(exc).__name__, text, portable)

    def exception(self) -> Exception:
        """The exception to raise on the caller's side; the kernel there turns it into
        the same typed error an in-process component's would be."""
        if self.error is not None:
            return self.error
        # a SystemExit or KeyboardInterrupt of the plugin is its failure, not the caller's
        # interrupt: raised on this side as a plain Exception of the same name
        named: type[Exception] = type(self.type_name, (Exception,), {"__module__": __name__})
        return named(self.text)


class ComponentHost:
    """Builds component ``name`` of ``component_type`` from ``attributes`` in this
    process on first need (again after Ray restarts the actor) and runs its methods."""

    def __init__(self, component_type: str, name: str, attributes: dict[str, Any]) -> None:
        self._component_type = component_type
        self._name = name
        self._attributes = attributes
        self._kernel: Kernel | None = None
        self._instance: Any = None
        self._building: asyncio.Lock | None = None
        self._streams: dict[str, AsyncGenerator[list[Any], None]] = {}

    async def _component(self) -> Any:
        if self._instance is None:
            if self._building is None:
                self._building = asyncio.Lock()
            async with self._building:
                if self._instance is None:
                    kernel = Kernel()
                    # already validated, with the caller's trust, by the defining kernel
                    await kernel.define(
                        self._component_type, self._name, self._attributes, trusted=True
                    )
                    self._kernel = kernel
                    self._instance = kernel.component(self._name)
        return self._instance

    async def start(self) -> Failure | dict[str, Any]:
        """Build the component now; what this replica is, or why building failed."""
        try:
            await self._component()
        except Exception as exc:
            return Failure.of(exc)
        return self.info()

    def info(self) -> dict[str, Any]:
        import ray

        return {"pid": os.getpid(), "node_id": ray.get_runtime_context().get_node_id()}

    async def ping(self) -> dict[str, Any]:
        await self._component()
        return self.info()

    async def call(self, method: str, arg: Any) -> Any:
        try:
            fn = getattr(await self._component(), method)
            if inspect.iscoroutinefunction(inspect.unwrap(fn)):
                result = await fn(arg)
            else:
                result = await asyncio.to_thread(fn, arg)
            if inspect.isawaitable(result):
                result = await result
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            return Failure.of(exc)
        return result

    async def stream(self, method: str, arg: Any, window: int) -> AsyncGenerator[list[Any], None]:
        """A Ray streaming generator of the method's items, sent in order as lists: each
        list is everything the component yielded since the last one was taken. A component
        slower than the transport (a model, token by token) sends one item per list, the
        moment it is yielded; a faster one shares Ray's cost per object over many. At most
        ``window`` items wait here; while they do, the component is paused (backpressure)."""
        waiting: asyncio.Queue[Any] = asyncio.Queue(maxsize=window)

        async def pump() -> None:
            items = self._produce(method, arg)
            try:
                async for item in items:
                    await waiting.put(item)
            finally:
                await items.aclose()
            await waiting.put(_END)

        task = asyncio.ensure_future(pump())
        try:
            while True:
                batch = [await waiting.get()]
                while not waiting.empty():
                    batch.append(waiting.get_nowait())
                ended = batch[-1] is _END
                if ended:
                    batch.pop()
                if batch:
                    yield batch
                if ended:
                    return
        finally:
            task.cancel()  # the reader left early: close the component's stream
            await asyncio.gather(task, return_exceptions=True)

    # Ray Client (a ray:// address) has no streaming generators: there, the caller opens
    # the same stream here and pulls its lists one call at a time.

    async def open_stream(self, method: str, arg: Any, window: int) -> str:
        key = uuid.uuid4().hex
        self._streams[key] = self.stream(method, arg, window)
        return key

    async def pull(self, key: str) -> list[Any] | None:
        """The next list of the stream ``key``; None when it has ended."""
        try:
            return await self._streams[key].__anext__()
        except StopAsyncIteration:
            del self._streams[key]
            return None

    async def close_stream(self, key: str) -> None:
        stream = self._streams.pop(key, None)
        if stream is not None:
            await stream.aclose()

    async def _produce(self, method: str, arg: Any) -> AsyncGenerator[Any, None]:
        """The method's items; what it raises becomes a last `Failure` item."""
        items: Any = None
        try:
            fn = getattr(await self._component(), method)
            target = inspect.unwrap(fn)
            if inspect.isasyncgenfunction(target) or inspect.isgeneratorfunction(target):
                items = fn(arg)
            else:
                items = await asyncio.to_thread(fn, arg)
                if inspect.isawaitable(items):
                    items = await items
            if hasattr(items, "__aiter__"):
                async for item in items:
                    yield item
            else:
                iterator = iter(items)
                items = iterator
                while (item := await asyncio.to_thread(next, iterator, _END)) is not _END:
                    yield item
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except BaseException as exc:
            yield Failure.of(exc)
        finally:
            await _close(items)

    async def close(self) -> None:
        if self._kernel is not None:
            await self._kernel.aclose()


async def _close(items: Any) -> None:
    """Close a producer the stream leaves early (or ends); a failure to close is its own."""
    try:
        if hasattr(items, "aclose"):
            await items.aclose()
        elif hasattr(items, "close"):
            await asyncio.to_thread(items.close)
    except Exception as exc:  # the stream already ended: logged, not raised over it
        log.warning("producer_close_failed", error=str(exc))
