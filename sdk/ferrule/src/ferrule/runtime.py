"""`Runtime` (synchronous, for scripts and notebooks) and `AsyncRuntime` (for servers).

`Runtime` owns an event loop in a daemon thread, started on first need: components and
async plugin code live there, so a synchronous caller (even one inside a running loop,
as in Jupyter) just waits for results. Plain sync operators skip the loop and run in the
caller's thread. Every sync method has an async twin (``acall``, ``adefine``, ...) that
works from any event loop. `AsyncRuntime` runs the kernel on the caller's own loop.

Both are code in this process, so their requests are *trusted* (see
`ferrule_kernel.trust`): they may name code and files of this machine where a plugin
allows it, which `ferrule serve` refuses to its network clients.

Given a ``url``, both talk to a `ferrule serve` server instead, with the same methods,
results and typed errors: ``Runtime(url=...)`` is a `RemoteRuntime` (below), whose HTTP
client (`ferrule.remote.KernelClient`) is imported only then, so the in-process path never
loads aiohttp. `ferrule.remote` imports nothing of this module.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from ferrule_kernel import FerruleError, InvalidInputError, Kernel, Prepared

from ._loop import Bridge, CallerLoop, LoopThread

if TYPE_CHECKING:
    from .remote import KernelClient, _Components

# asyncio is imported inside the methods that use it: a synchronous call of a plain
# operator never needs an event loop, and importing asyncio is a large part of a cold start.

_INPROC = "inproc://"

#: Runtimes whose loop runs: what `_stop_running` stops at interpreter exit.
_running: set[Runtime] = set()
_running_lock = threading.Lock()
_exit_hook = False


def _stop_at_exit(runtime: Runtime) -> None:
    """Stop ``runtime`` at interpreter exit unless it is stopped before, so that a script
    that forgets ``rt.stop()`` still closes its components (models, connections) quietly."""
    global _exit_hook
    with _running_lock:
        _running.add(runtime)
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
    with _running_lock:
        runtimes = list(_running)
    for runtime in runtimes:
        runtime.stop()


def _new_kernel() -> Kernel:
    from ferrule_kit import _builtin
    from ferrule_kit.parts import registry

    from .catalog import install_hint

    # The catalog says what to install for an unknown operator or component type (the
    # kernel) and for an unknown part type on the wire (the process-wide part registry).
    registry.install_hint = install_hint
    return Kernel(plugins=[_builtin], install_hint=install_hint)


def _check_address(address: str) -> None:
    if address != _INPROC:
        raise InvalidInputError(
            f"address {address!r} is not supported; use the default {_INPROC!r}, "
            "or url='http://host:port' for a ferrule server",
            field="address",
        )


class Runtime:
    """The ferrule runtime for synchronous code, with async twins of every method.

    ``Runtime()`` runs the kernel in-process with every installed plugin;
    ``Runtime(url="http://host:port", token=...)`` uses the kernel of a `ferrule serve`.
    """

    def __new__(cls, *args: Any, url: str | None = None, **kwargs: Any) -> Runtime:
        if url is not None and cls is Runtime:
            return super().__new__(RemoteRuntime)
        return super().__new__(cls)

    def __init__(
        self,
        address: str = _INPROC,
        *,
        kernel: Kernel | None = None,
        url: str | None = None,
        token: str | None = None,
        timeout: float | None = None,
    ) -> None:
        _check_address(address)
        if token is not None or timeout is not None:
            raise InvalidInputError("token and timeout are for a Runtime with a url", field="token")
        self.kernel = kernel if kernel is not None else _new_kernel()
        self._loop = LoopThread(on_start=lambda: _stop_at_exit(self))
        self._stopped = False

    @property
    def sync_bridge(self) -> Bridge:
        """Where this runtime's async code runs: its loop thread (`ferrule._loop.blocking`
        derives the sync twins of objects using this runtime through it)."""
        return self._loop

    # -- sync ----------------------------------------------------------------------

    def call(self, operator: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        prepared = self._prepare(operator, inputs)
        if prepared.inline:
            return prepared.run_inline()
        return self._loop.run(prepared.run())

    def call_iter(
        self, operator: str, inputs: dict[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        prepared = self._prepare(operator, inputs, streaming=True)
        return self._stream(prepared)

    def define(
        self,
        component_type: str,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        placement: dict[str, Any] | None = None,
    ) -> None:
        """Define component ``name``; ``placement`` (e.g. ``{"kind": "ray", "replicas":
        2}``) puts it where a placement plugin runs it (docs/deployment.md)."""
        self._check_open()
        self._loop.run(
            self.kernel.define(component_type, name, attrs, placement=placement, trusted=True)
        )

    def delete(self, name: str) -> None:
        self._check_open()
        self._loop.run(self.kernel.delete(name))

    def call_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self._check_open()
        prepared = self.kernel.prepare_method(name, method, _inputs(inputs), trusted=True)
        if prepared.inline:
            return prepared.run_inline()
        return self._loop.run(prepared.run())

    def call_iter_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        self._check_open()
        prepared = self.kernel.prepare_method(
            name, method, _inputs(inputs), streaming=True, trusted=True
        )
        return self._stream(prepared)

    def plugins(self) -> list[dict[str, Any]]:
        """Every plugin seen, with what it registers, or why it is broken."""
        self._check_open()
        return self.kernel.plugins()

    def operators(self) -> list[dict[str, Any]]:
        """The installed operators with their input schemas."""
        self._check_open()
        return self.kernel.operators()

    def component_types(self) -> list[dict[str, Any]]:
        """The installed component types with their attribute and method schemas."""
        self._check_open()
        return self.kernel.component_types()

    def stop(self) -> None:
        """Delete every component and stop the runtime's loop. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        _running.discard(self)
        if self._loop.started:
            self._loop.run(self.kernel.aclose())
        self._loop.stop()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- async twins ---------------------------------------------------------------

    async def acall(self, operator: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self._loop.arun(self._prepare(operator, inputs).run())

    def acall_iter(
        self, operator: str, inputs: dict[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        prepared = self._prepare(operator, inputs, streaming=True)
        return self._loop.astream(prepared.stream())

    async def adefine(
        self,
        component_type: str,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        placement: dict[str, Any] | None = None,
    ) -> None:
        self._check_open()
        await self._loop.arun(
            self.kernel.define(component_type, name, attrs, placement=placement, trusted=True)
        )

    async def adelete(self, name: str) -> None:
        self._check_open()
        await self._loop.arun(self.kernel.delete(name))

    async def acall_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self._check_open()
        prepared = self.kernel.prepare_method(name, method, _inputs(inputs), trusted=True)
        return await self._loop.arun(prepared.run())

    def acall_iter_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        self._check_open()
        prepared = self.kernel.prepare_method(
            name, method, _inputs(inputs), streaming=True, trusted=True
        )
        return self._loop.astream(prepared.stream())

    async def aplugins(self) -> list[dict[str, Any]]:
        return self.plugins()

    async def aoperators(self) -> list[dict[str, Any]]:
        return self.operators()

    async def acomponent_types(self) -> list[dict[str, Any]]:
        return self.component_types()

    async def astop(self) -> None:
        import asyncio

        if self._stopped:
            return
        self._stopped = True
        _running.discard(self)
        if self._loop.started:
            await self._loop.arun(self.kernel.aclose())
        await asyncio.to_thread(self._loop.stop)

    # -- helpers -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._stopped:
            raise FerruleError("this Runtime was stopped; create a new one")

    def _prepare(self, operator: str, inputs: Any, streaming: bool = False) -> Prepared:
        self._check_open()
        return self.kernel.prepare(operator, _inputs(inputs), streaming=streaming, trusted=True)

    def _stream(self, prepared: Prepared) -> Iterator[dict[str, Any]]:
        if prepared.inline:
            return prepared.stream_inline()
        return self._loop.stream(prepared.stream())


def _inputs(inputs: Any) -> Any:
    return {} if inputs is None else inputs


class AsyncRuntime:
    """The ferrule runtime for async code: every method is a coroutine (or async iterator)
    run on the caller's event loop. The ``a``-prefixed names of `Runtime` work here too.
    ``AsyncRuntime(url=..., token=...)`` uses the kernel of a `ferrule serve`."""

    def __new__(cls, *args: Any, url: str | None = None, **kwargs: Any) -> AsyncRuntime:
        if url is not None and cls is AsyncRuntime:
            return super().__new__(AsyncRemoteRuntime)
        return super().__new__(cls)

    def __init__(
        self,
        address: str = _INPROC,
        *,
        kernel: Kernel | None = None,
        url: str | None = None,
        token: str | None = None,
        timeout: float | None = None,
    ) -> None:
        _check_address(address)
        if token is not None or timeout is not None:
            raise InvalidInputError("token and timeout are for a Runtime with a url", field="token")
        self.kernel = kernel if kernel is not None else _new_kernel()
        self._stopped = False

    @property
    def sync_bridge(self) -> Bridge:
        """Where this runtime's async code runs: the caller's event loop, so sync twins
        derived with `ferrule._loop.blocking` refuse, naming the async method."""
        return CallerLoop()

    def _check_open(self) -> None:
        if self._stopped:
            raise FerruleError("this Runtime was stopped; create a new one")

    async def call(self, operator: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        self._check_open()
        return await self.kernel.prepare(operator, _inputs(inputs), trusted=True).run()

    def call_iter(
        self, operator: str, inputs: dict[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        self._check_open()
        return self.kernel.iter(operator, _inputs(inputs), trusted=True)

    async def define(
        self,
        component_type: str,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        placement: dict[str, Any] | None = None,
    ) -> None:
        self._check_open()
        await self.kernel.define(component_type, name, attrs, placement=placement, trusted=True)

    async def delete(self, name: str) -> None:
        self._check_open()
        await self.kernel.delete(name)

    async def call_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self._check_open()
        return await self.kernel.call_method(name, method, _inputs(inputs), trusted=True)

    def call_iter_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        self._check_open()
        return self.kernel.iter_method(name, method, _inputs(inputs), trusted=True)

    async def plugins(self) -> list[dict[str, Any]]:
        self._check_open()
        return self.kernel.plugins()

    async def operators(self) -> list[dict[str, Any]]:
        self._check_open()
        return self.kernel.operators()

    async def component_types(self) -> list[dict[str, Any]]:
        self._check_open()
        return self.kernel.component_types()

    async def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            await self.kernel.aclose()

    async def __aenter__(self) -> AsyncRuntime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    acall = call
    acall_iter = call_iter
    adefine = define
    adelete = delete
    acall_method = call_method
    acall_iter_method = call_iter_method
    aplugins = plugins
    aoperators = operators
    acomponent_types = component_types
    astop = stop


# -- against a ferrule server ------------------------------------------------------


def _iter_body(operator: str, inputs: Any) -> dict[str, Any]:
    return {"operator": operator, "inputs": inputs}


def _iter_method_body(name: str, method: str, inputs: Any) -> dict[str, Any]:
    return {"name": name, "method": method, "inputs": inputs}


def _connect(
    address: str, kernel: Any, url: str | None, token: str | None, timeout: float | None
) -> _Components:
    """The client of a Runtime with a ``url``, and the components it defines."""
    _check_address(address)
    if kernel is not None:
        raise InvalidInputError("a Runtime with a url has no kernel of its own", field="kernel")
    from .remote import KernelClient, _Components  # imports aiohttp: only for a url

    return _Components(KernelClient(url, token, timeout))  # type: ignore[arg-type]


class RemoteRuntime(Runtime):
    """`Runtime` against a ferrule server (``Runtime(url=...)`` builds one): the same
    methods, results and typed errors as in-process, over HTTP."""

    def __init__(
        self,
        address: str = _INPROC,
        *,
        kernel: Any = None,
        url: str | None = None,
        token: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self._components = _connect(address, kernel, url, token, timeout)
        self._client: KernelClient = self._components.client
        self.url = self._client.url
        self._loop = LoopThread(on_start=lambda: _stop_at_exit(self))
        self._stopped = False

    def __repr__(self) -> str:
        return f"Runtime(url={self.url!r})"

    # -- sync ----------------------------------------------------------------------

    def call(self, operator: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        self._check_open()
        return self._loop.run(
            self._client.request("call", {"operator": operator, "inputs": inputs})
        )

    def call_iter(
        self, operator: str, inputs: dict[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        self._check_open()
        response = self._loop.run(self._client.open_stream(_iter_body(operator, inputs)))
        return self._loop.stream(self._client.items(response))

    def define(
        self,
        component_type: str,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        placement: dict[str, Any] | None = None,
    ) -> None:
        self._check_open()
        self._loop.run(self._components.define(component_type, name, attrs, placement))

    def delete(self, name: str) -> None:
        self._check_open()
        self._loop.run(self._components.delete(name))

    def call_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self._check_open()
        body = {"name": name, "method": method, "inputs": inputs}
        return self._loop.run(self._client.request("call_method", body))

    def call_iter_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        self._check_open()
        response = self._loop.run(self._client.open_stream(_iter_method_body(name, method, inputs)))
        return self._loop.stream(self._client.items(response))

    def plugins(self) -> list[dict[str, Any]]:
        self._check_open()
        return self._loop.run(self._client.get("plugins"))

    def operators(self) -> list[dict[str, Any]]:
        self._check_open()
        return self._loop.run(self._client.get("operators"))

    def component_types(self) -> list[dict[str, Any]]:
        self._check_open()
        return self._loop.run(self._client.get("component_types"))

    def stop(self) -> None:
        """Delete the components this runtime defined, close its connections. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        _running.discard(self)
        if self._loop.started:
            self._loop.run(self._components.close())
        self._loop.stop()

    # -- async twins ---------------------------------------------------------------

    async def acall(self, operator: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        self._check_open()
        return await self._loop.arun(
            self._client.request("call", {"operator": operator, "inputs": inputs})
        )

    def acall_iter(
        self, operator: str, inputs: dict[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        self._check_open()
        return self._loop.astream(self._client.stream(_iter_body(operator, inputs)))

    async def adefine(
        self,
        component_type: str,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        placement: dict[str, Any] | None = None,
    ) -> None:
        self._check_open()
        await self._loop.arun(self._components.define(component_type, name, attrs, placement))

    async def adelete(self, name: str) -> None:
        self._check_open()
        await self._loop.arun(self._components.delete(name))

    async def acall_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self._check_open()
        body = {"name": name, "method": method, "inputs": inputs}
        return await self._loop.arun(self._client.request("call_method", body))

    def acall_iter_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        self._check_open()
        return self._loop.astream(self._client.stream(_iter_method_body(name, method, inputs)))

    async def aplugins(self) -> list[dict[str, Any]]:
        self._check_open()
        return await self._loop.arun(self._client.get("plugins"))

    async def aoperators(self) -> list[dict[str, Any]]:
        self._check_open()
        return await self._loop.arun(self._client.get("operators"))

    async def acomponent_types(self) -> list[dict[str, Any]]:
        self._check_open()
        return await self._loop.arun(self._client.get("component_types"))

    async def astop(self) -> None:
        import asyncio

        if self._stopped:
            return
        self._stopped = True
        _running.discard(self)
        if self._loop.started:
            await self._loop.arun(self._components.close())
        await asyncio.to_thread(self._loop.stop)


class AsyncRemoteRuntime(AsyncRuntime):
    """`AsyncRuntime` against a ferrule server (``AsyncRuntime(url=...)`` builds one); its
    connections live on the event loop that first uses it."""

    def __init__(
        self,
        address: str = _INPROC,
        *,
        kernel: Any = None,
        url: str | None = None,
        token: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self._components = _connect(address, kernel, url, token, timeout)
        self._client: KernelClient = self._components.client
        self.url = self._client.url
        self._stopped = False

    def __repr__(self) -> str:
        return f"AsyncRuntime(url={self.url!r})"

    async def call(self, operator: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        self._check_open()
        return await self._client.request("call", {"operator": operator, "inputs": inputs})

    def call_iter(
        self, operator: str, inputs: dict[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        self._check_open()
        return self._client.stream(_iter_body(operator, inputs))

    async def define(
        self,
        component_type: str,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        placement: dict[str, Any] | None = None,
    ) -> None:
        self._check_open()
        await self._components.define(component_type, name, attrs, placement)

    async def delete(self, name: str) -> None:
        self._check_open()
        await self._components.delete(name)

    async def call_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self._check_open()
        return await self._client.request(
            "call_method", {"name": name, "method": method, "inputs": inputs}
        )

    def call_iter_method(
        self, name: str, method: str, inputs: dict[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        self._check_open()
        return self._client.stream(_iter_method_body(name, method, inputs))

    async def plugins(self) -> list[dict[str, Any]]:
        self._check_open()
        return await self._client.get("plugins")

    async def operators(self) -> list[dict[str, Any]]:
        self._check_open()
        return await self._client.get("operators")

    async def component_types(self) -> list[dict[str, Any]]:
        self._check_open()
        return await self._client.get("component_types")

    async def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            await self._components.close()

    acall = call
    acall_iter = call_iter
    adefine = define
    adelete = delete
    acall_method = call_method
    acall_iter_method = call_iter_method
    aplugins = plugins
    aoperators = operators
    acomponent_types = component_types
    astop = stop
