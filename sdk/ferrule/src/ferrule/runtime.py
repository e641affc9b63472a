"""The Runtime: the kernel's requests written once, async, over two transports, with one sync facade.

- `_Core` writes each request once: it checks the request at once and hands back an
  `Exchange` of its transport (`ferrule._transport`): `KernelTransport`, a kernel in this
  process, or `ferrule.remote.HttpTransport`, a `ferrule serve` (given ``url=``; aiohttp
  is imported only then).
- `AsyncRuntime` derives a coroutine (an async iterator for a stream) from each request
  (`_awaited`, `_streamed`): it runs on the caller's event loop.
- `Runtime` is the sync facade, derived from the same requests (`_waited`,
  `_waited_stream`): it waits for them on an event loop in a daemon thread of its own,
  started on first need (`ferrule._bridge.LoopThread`), so a synchronous caller, even one
  inside a running loop as in Jupyter, just waits; a plain sync operator runs in the
  caller's thread and starts no loop. Its async twins (``acall``, ``aiter``, ...) are
  `AsyncRuntime`'s methods, which reach that loop from any event loop.

The names are the kernel's and the wire's: ``define``, ``delete``, ``call``,
``call_method``, ``iter``, ``iter_method``; ``call_iter`` / ``call_iter_method`` are the
same methods under Ailoy's names (the seeds use them). `RemoteRuntime` and
`AsyncRemoteRuntime` are what ``Runtime(url=...)`` / ``AsyncRuntime(url=...)`` build: the
same classes, named for ``isinstance`` and typing.

``Runtime("inproc://NAME")`` (or `AsyncRuntime`) is a *named* in-process runtime: every
runtime of one name in a process shares one kernel, its components and its loop thread,
which stop when the last of them stops (as Ailoy's named runtimes do). ``Runtime()``
(``"inproc://"``) has a kernel of its own.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar

from ferrule_kernel import FerruleError, InvalidInputError, Kernel

from ._bridge import Bridge, CallerLoop, LoopThread
from ._transport import Exchange, KernelTransport, Transport

# asyncio is imported inside the methods that use it: a synchronous call of a plain
# operator never needs an event loop, and importing asyncio is a large part of a cold start.

_INPROC = "inproc://"

P = ParamSpec("P")
R = TypeVar("R")
Item = dict[str, Any]


def new_kernel() -> Kernel:
    """A kernel of this process with ferrule's built-in operators and the catalog's hints
    (each in-process runtime's, ``ferrule serve``'s, and a remote agent's routing one)."""
    from ferrule_kit import kit_plugin
    from ferrule_kit.content.parts import registry

    from .catalog import install_hint

    # The catalog says what to install for an unknown operator or component type (the
    # kernel) and for an unknown part type on the wire (the process-wide part registry).
    registry.install_hint = install_hint
    return Kernel(plugins=[kit_plugin], install_hint=install_hint)


# -- engines: a transport and the loop its requests run on -----------------------------


class _Engine:
    """A transport and the bridge its requests run on, shared by the runtimes of one
    name (``"inproc://NAME"``) or owned by one runtime; it closes with its last user."""

    def __init__(self, transport: Transport, threaded: bool, name: str | None = None) -> None:
        self.transport, self.name = transport, name
        self.bridge: Bridge = (
            LoopThread(on_start=lambda: _stop_at_exit(self)) if threaded else CallerLoop()
        )
        self.users = 1

    def leave(self) -> bool:
        """One user fewer; True when it was the last, who closes the engine."""
        with _lock:
            self.users -= 1
            if self.users > 0:
                return False
            if self.name is not None and _named.get(self.name) is self:
                del _named[self.name]
            return True

    def close(self) -> None:
        """Close the transport (its components, its connections) and stop the loop."""
        _running.discard(self)
        bridge = self.bridge
        if isinstance(bridge, LoopThread):
            if bridge.started:
                bridge.run(self.transport.aclose())
            bridge.stop()
        else:  # only an AsyncRuntime of the caller's loop, which refuses a sync stop
            raise TypeError("this runtime runs on its caller's event loop: await its stop()")

    async def aclose(self) -> None:
        _running.discard(self)
        bridge = self.bridge
        if isinstance(bridge, LoopThread):
            import asyncio

            if bridge.started:
                await bridge.arun(self.transport.aclose())
            await asyncio.to_thread(bridge.stop)
        else:
            await self.transport.aclose()


_lock = threading.Lock()
#: The engines of named in-process runtimes, by name.
_named: dict[str, _Engine] = {}
#: Engines whose loop runs: what `_stop_running` closes at interpreter exit.
_running: set[_Engine] = set()
_exit_hook = False


def _stop_at_exit(engine: _Engine) -> None:
    """Close ``engine`` at interpreter exit unless it is closed before, so that a script
    that forgets ``rt.stop()`` still closes its components (models, connections) quietly."""
    global _exit_hook
    with _lock:
        _running.add(engine)
        if _exit_hook:
            return
        # Not atexit: at exit, threading first runs the hooks of threading._register_atexit,
        # newest first, and concurrent.futures' hook there stops every executor, after which
        # a component that closes through a worker thread (asyncio.to_thread) fails with
        # "cannot schedule new futures after shutdown". Registered after it, ours runs first.
        import concurrent.futures.thread  # noqa: F401  (registers its hook, if not yet)

        try:
            threading._register_atexit(_stop_running)  # type: ignore[attr-defined]
        except RuntimeError:  # the interpreter is exiting already: nothing to hook
            return
        _exit_hook = True


def _stop_running() -> None:
    with _lock:
        engines = list(_running)
    for engine in engines:
        engine.close()


def _inproc_name(address: object) -> str | None:
    """The name of a named in-process address, None for the default one."""
    if isinstance(address, str) and address.startswith(_INPROC):
        return address[len(_INPROC) :] or None
    raise InvalidInputError(
        f"address {address!r} is not supported; use the default {_INPROC!r}, a named "
        f"in-process runtime ('{_INPROC}NAME'), or url='http://host:port' for a ferrule "
        "server",
        field="address",
    )


def _engine(
    address: str,
    kernel: Kernel | None,
    url: str | None,
    token: str | None,
    timeout: float | None,
    threaded: bool,
) -> _Engine:
    """The engine a runtime constructed with these arguments runs on."""
    name = _inproc_name(address)
    transport: Transport
    if url is not None:
        if name is not None:
            raise InvalidInputError("a Runtime has an address or a url, not both", field="address")
        if kernel is not None:
            raise InvalidInputError("a Runtime with a url has no kernel of its own", field="kernel")
        from .remote import HttpTransport, KernelClient  # imports aiohttp: only for a url

        transport = HttpTransport(KernelClient(url, token, timeout))
        return _Engine(transport, threaded)
    if token is not None or timeout is not None:
        raise InvalidInputError("token and timeout are for a Runtime with a url", field="token")
    if name is None:
        transport = KernelTransport(kernel if kernel is not None else new_kernel())
        return _Engine(transport, threaded)
    if kernel is not None:
        raise InvalidInputError(
            f"{address!r} is shared by name: its kernel is made with the first runtime of "
            "that name, so it takes no kernel",
            field="kernel",
        )
    with _lock:
        engine = _named.get(name)
        if engine is not None:
            engine.users += 1
            return engine
    # A named engine runs on a loop thread whoever uses it, sync or async: its components
    # live there, and each runtime of the name reaches them from its own thread or loop.
    made = _Engine(KernelTransport(new_kernel()), threaded=True, name=name)
    with _lock:
        engine = _named.setdefault(name, made)
        if engine is not made:  # another thread made it first
            engine.users += 1
        return engine


# -- the requests, each written once ---------------------------------------------------


class _Stopped:
    """The transport of a stopped runtime: every request raises."""

    def __getattr__(self, request: str) -> Any:
        raise FerruleError("this Runtime was stopped; create a new one")


class _Core:
    """One runtime's requests: each is checked here, at once, and handed back as an
    `Exchange` of the engine's transport, which `AsyncRuntime` awaits and `Runtime` waits for."""

    def __init__(self, engine: _Engine) -> None:
        self.engine = engine
        # the engine's transport, until this runtime stops (a null object then: a request
        # costs no check of its own)
        self.transport: Transport = engine.transport

    def release(self) -> bool:
        """Stop this runtime; True when its engine is to be closed (its last user)."""
        if isinstance(self.transport, _Stopped):
            return False
        self.transport = _Stopped()  # type: ignore[assignment]
        return self.engine.leave()

    def define(
        self,
        component_type: str,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        placement: dict[str, Any] | None = None,
    ) -> Exchange[None]:
        """Define component ``name`` of ``component_type``; ``placement`` (e.g. ``{"kind":
        "ray", "replicas": 2}``) puts it where a placement plugin runs it (docs/deployment.md)."""
        return self.transport.define(component_type, name, attrs, placement)

    def delete(self, name: str) -> Exchange[None]:
        """Delete component ``name``, closing it."""
        return self.transport.delete(name)

    def call(self, operator: str, inputs: dict[str, Any] | None = None) -> Exchange[Item]:
        """Call an operator (or ``"component.method"``) and return its output."""
        return self.transport.call(operator, {} if inputs is None else inputs)

    def call_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> Exchange[Item]:
        """Call ``method`` of component ``name`` and return its output."""
        return self.transport.call_method(name, method, {} if inputs is None else inputs)

    def iter(self, operator: str, inputs: dict[str, Any] | None = None) -> Exchange[Any]:
        """Stream the outputs of an operator (or ``"component.method"``); an unknown name
        or invalid input raises at once. Closing the stream stops its producer."""
        return self.transport.iter(operator, {} if inputs is None else inputs)

    def iter_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> Exchange[Any]:
        """Stream the outputs of ``method`` of component ``name``."""
        return self.transport.iter_method(name, method, {} if inputs is None else inputs)

    def plugins(self) -> Exchange[list[Item]]:
        """Every plugin seen, with what it registers, or why it is broken."""
        return self.transport.describe("plugins")

    def operators(self) -> Exchange[list[Item]]:
        """The installed operators with their input schemas."""
        return self.transport.describe("operators")

    def component_types(self) -> Exchange[list[Item]]:
        """The installed component types with their attribute and method schemas."""
        return self.transport.describe("component_types")


# -- deriving the async and the sync methods -------------------------------------------


class _Face:
    """What `AsyncRuntime` and `Runtime` share: a `_Core`, and how they describe it."""

    _core: _Core

    @property
    def sync_bridge(self) -> Bridge:
        """Where this runtime's async code runs: a `Runtime`'s (or a named runtime's) loop
        thread, or an `AsyncRuntime`'s caller's loop. `ferrule._bridge.blocking` derives
        the sync twins of objects using this runtime through it."""
        return self._core.engine.bridge

    @property
    def kernel(self) -> Kernel:
        """The in-process kernel (a runtime with a ``url`` has none: the server's is its)."""
        transport = self._core.engine.transport
        if not isinstance(transport, KernelTransport):
            raise AttributeError("a Runtime with a url has no kernel: it uses the server's")
        return transport.kernel

    @property
    def stopped(self) -> bool:
        """True once `stop` was called (a stopped runtime refuses every request)."""
        return isinstance(self._core.transport, _Stopped)

    @property
    def url(self) -> str | None:
        """The ferrule server's URL, or None in-process."""
        transport = self._core.engine.transport
        return None if isinstance(transport, KernelTransport) else transport.client.url  # type: ignore[attr-defined]

    async def _astop(self) -> None:
        """Stop this runtime: delete the components it defined (a named one's, with the
        last runtime of the name) and close its connections. Idempotent."""
        if self._core.release():
            await self._core.engine.aclose()

    def __repr__(self) -> str:  # never the token
        face = "AsyncRuntime" if isinstance(self, AsyncRuntime) else "Runtime"
        if self.url is not None:
            return f"{face}(url={self.url!r})"
        name = self._core.engine.name
        return f"{face}({_INPROC + (name or '')!r})"


def _awaited(
    request: Callable[Concatenate[_Core, P], Exchange[R]],
) -> Callable[Concatenate[_Face, P], Coroutine[Any, Any, R]]:
    """The coroutine method of ``request``: checked and run on the runtime's loop."""

    @functools.wraps(request)
    async def method(self: _Face, /, *args: P.args, **kwargs: P.kwargs) -> R:
        core = self._core
        bridge = core.engine.bridge
        running = request(core, *args, **kwargs).run()
        if isinstance(bridge, CallerLoop):  # already where it runs: no hop
            return await running
        return await bridge.arun(running)

    return method


def _streamed(
    request: Callable[Concatenate[_Core, P], Exchange[Any]],
) -> Callable[Concatenate[_Face, P], AsyncIterator[Item]]:
    """The async-iterator method of a streaming ``request``, checked at the call."""

    @functools.wraps(request)
    def method(self: _Face, /, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[Item]:
        core = self._core
        return _items(core.engine.bridge, request(core, *args, **kwargs))

    return method


async def _items(bridge: Bridge, exchange: Exchange[Any]) -> AsyncGenerator[Item, None]:
    items = bridge.astream(await bridge.arun(exchange.open()))
    try:
        async for item in items:
            yield item
    finally:
        # an async generator, on either bridge
        await items.aclose()  # type: ignore[attr-defined]


def _waited(
    request: Callable[Concatenate[_Core, P], Exchange[R]],
) -> Callable[Concatenate[Runtime, P], R]:
    """The synchronous method of ``request``: inline when it may, else on the loop thread."""

    @functools.wraps(request)
    def method(self: Runtime, /, *args: P.args, **kwargs: P.kwargs) -> R:
        exchange = request(self._core, *args, **kwargs)
        if exchange.inline:
            return exchange.run_inline()
        return self._loop.run(exchange.run())

    return method


def _waited_stream(
    request: Callable[Concatenate[_Core, P], Exchange[Any]],
) -> Callable[Concatenate[Runtime, P], Iterator[Item]]:
    """The synchronous iterator of a streaming ``request``: opened at once (its errors
    raise here), read ahead on the loop thread; closing it stops the producer."""

    @functools.wraps(request)
    def method(self: Runtime, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[Item]:
        exchange = request(self._core, *args, **kwargs)
        if exchange.inline:
            return exchange.stream_inline()
        return self._loop.stream(self._loop.run(exchange.open()))

    return method


# -- the two faces ---------------------------------------------------------------------


class AsyncRuntime(_Face):
    """The ferrule runtime for async code: every request is a coroutine (a stream, an
    async iterator) on the caller's event loop; the ``a``-prefixed names of `Runtime` work
    here too. ``AsyncRuntime(url=..., token=...)`` uses the kernel of a `ferrule serve`
    (its connections live on the loop that first uses it); ``AsyncRuntime("inproc://NAME")``
    shares the named runtime's kernel and loop thread, and may be used from any loop."""

    def __new__(cls, *args: Any, url: str | None = None, **kwargs: Any) -> AsyncRuntime:
        return super().__new__(
            AsyncRemoteRuntime if url is not None and cls is AsyncRuntime else cls
        )

    def __init__(
        self,
        address: str = _INPROC,
        *,
        kernel: Kernel | None = None,
        url: str | None = None,
        token: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self._core = _Core(_engine(address, kernel, url, token, timeout, threaded=False))

    define = _awaited(_Core.define)
    delete = _awaited(_Core.delete)
    call = _awaited(_Core.call)
    call_method = _awaited(_Core.call_method)
    iter = _streamed(_Core.iter)
    iter_method = _streamed(_Core.iter_method)
    plugins = _awaited(_Core.plugins)
    operators = _awaited(_Core.operators)
    component_types = _awaited(_Core.component_types)

    stop = _Face._astop

    async def __aenter__(self) -> AsyncRuntime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def __enter__(self) -> AsyncRuntime:
        """``with``, for a runtime on a loop thread of its own (a named one, as Ailoy's
        ``with AsyncRuntime("inproc://x")``); one on the caller's loop needs ``async with``."""
        if not self._core.engine.bridge.can_block:
            raise TypeError("this AsyncRuntime runs on its caller's event loop: use `async with`")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._core.release():
            self._core.engine.close()

    # Ailoy's names, and the async twins' names of `Runtime`: the same methods.
    call_iter = iter
    call_iter_method = iter_method
    adefine = define
    adelete = delete
    acall = call
    acall_method = call_method
    aiter = acall_iter = iter
    aiter_method = acall_iter_method = iter_method
    aplugins = plugins
    aoperators = operators
    acomponent_types = component_types
    astop = stop


class Runtime(_Face):
    """The ferrule runtime for synchronous code, with async twins of every method.

    ``Runtime()`` runs a kernel of its own in-process with every installed plugin;
    ``Runtime("inproc://NAME")`` shares one by name; ``Runtime(url="http://host:port",
    token=...)`` uses the kernel of a `ferrule serve`.
    """

    def __new__(cls, *args: Any, url: str | None = None, **kwargs: Any) -> Runtime:
        return super().__new__(RemoteRuntime if url is not None and cls is Runtime else cls)

    def __init__(
        self,
        address: str = _INPROC,
        *,
        kernel: Kernel | None = None,
        url: str | None = None,
        token: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self._core = _Core(_engine(address, kernel, url, token, timeout, threaded=True))

    @property
    def _loop(self) -> LoopThread:
        # always a LoopThread: a Runtime's engine is threaded
        return self._core.engine.bridge  # type: ignore[return-value]

    define = _waited(_Core.define)
    delete = _waited(_Core.delete)
    call = _waited(_Core.call)
    call_method = _waited(_Core.call_method)
    iter = _waited_stream(_Core.iter)
    iter_method = _waited_stream(_Core.iter_method)
    plugins = _waited(_Core.plugins)
    operators = _waited(_Core.operators)
    component_types = _waited(_Core.component_types)

    def stop(self) -> None:
        """Stop this runtime: delete the components it defined (a named one's, with the
        last runtime of the name), close its connections, stop its loop. Idempotent."""
        if self._core.release():
            self._core.engine.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # Ailoy's names: the same methods.
    call_iter = iter
    call_iter_method = iter_method

    # The async twins: `AsyncRuntime`'s methods, reaching this runtime's loop from any loop.
    adefine = AsyncRuntime.define
    adelete = AsyncRuntime.delete
    acall = AsyncRuntime.call
    acall_method = AsyncRuntime.call_method
    aiter = acall_iter = AsyncRuntime.iter
    aiter_method = acall_iter_method = AsyncRuntime.iter_method
    aplugins = AsyncRuntime.plugins
    aoperators = AsyncRuntime.operators
    acomponent_types = AsyncRuntime.component_types
    astop = _Face._astop


class RemoteRuntime(Runtime):
    """What ``Runtime(url=...)`` builds: a `Runtime` over HTTP to a `ferrule serve`, with
    the same methods, results and typed errors as in-process (a name for ``isinstance``)."""


class AsyncRemoteRuntime(AsyncRuntime):
    """What ``AsyncRuntime(url=...)`` builds: an `AsyncRuntime` over HTTP to a `ferrule
    serve` (a name for ``isinstance``)."""
