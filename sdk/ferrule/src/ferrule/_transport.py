"""The Runtime's transport protocol: the kernel's requests as `Exchange`s, and the in-process transport.

A `Transport` is one way to reach a kernel; it names the kernel's requests as the kernel
and the wire do (``define``, ``delete``, ``call``, ``call_method``, ``iter``,
``iter_method``, and ``describe`` for introspection). Each request is checked at once
(unknown names and invalid inputs raise in the caller's thread, for a stream too) and
comes back as an `Exchange`: run it on the loop (`Exchange.run`, `Exchange.open` for a
stream), or, where `Exchange.inline` says so, in the caller's own thread, so a sync script
calling a plain operator never starts an event loop.

Two transports: `KernelTransport` here (a `Kernel` in this process, its requests trusted)
and `ferrule.remote.HttpTransport` (``ferrule serve``, over HTTP). `ferrule.runtime`
writes the Runtime's methods once over this protocol.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Coroutine, Iterator
from typing import Any, Generic, Literal, Protocol, TypeVar

from ferrule_kernel import Kernel, Prepared

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)

#: What `Transport.describe` lists.
Listing = Literal["plugins", "operators", "component_types"]


class Exchange(Protocol[R_co]):
    """One checked request, ready to run."""

    @property
    def inline(self) -> bool:
        """True when a synchronous caller may run it in its own thread (`run_inline`,
        `stream_inline`) instead of on the loop."""
        ...

    def run_inline(self) -> R_co: ...

    def stream_inline(self) -> Iterator[dict[str, Any]]: ...

    async def run(self) -> R_co: ...

    async def open(self) -> AsyncGenerator[dict[str, Any], None]:
        """Start a stream: what fails before its first item raises here."""
        ...


class Transport(Protocol):
    """The requests of one kernel, each returning an `Exchange`; `aclose` ends what the
    transport holds (the components defined through it, its connections)."""

    def define(
        self, component_type: str, name: str, attrs: Any, placement: Any
    ) -> Exchange[None]: ...

    def delete(self, name: str) -> Exchange[None]: ...

    def call(self, target: str, inputs: Any) -> Exchange[dict[str, Any]]: ...

    def call_method(self, name: str, method: str, inputs: Any) -> Exchange[dict[str, Any]]: ...

    def iter(self, target: str, inputs: Any) -> Exchange[Any]: ...

    def iter_method(self, name: str, method: str, inputs: Any) -> Exchange[Any]: ...

    def describe(self, listing: Listing) -> Exchange[list[dict[str, Any]]]: ...

    async def aclose(self) -> None: ...


def _not_inline(*_: Any) -> Any:
    raise AssertionError("this request runs on the loop: Exchange.inline is False")


class Awaiting(Generic[R]):
    """An `Exchange` that is a coroutine of the loop (started by `run`, not before)."""

    inline = False
    __slots__ = ("_start",)

    def __init__(self, start: Callable[[], Coroutine[Any, Any, R]]) -> None:
        self._start = start

    run_inline = stream_inline = _not_inline

    async def run(self) -> R:
        return await self._start()

    async def open(self) -> AsyncGenerator[dict[str, Any], None]:
        return _not_inline()  # type: ignore[no-any-return]


class Ready(Generic[R]):
    """An `Exchange` answered by plain code, wherever it is run."""

    inline = True
    __slots__ = ("_answer",)

    def __init__(self, answer: Callable[[], R]) -> None:
        self._answer = answer

    def run_inline(self) -> R:
        return self._answer()

    stream_inline = _not_inline

    async def run(self) -> R:
        return self._answer()

    async def open(self) -> AsyncGenerator[dict[str, Any], None]:
        return _not_inline()  # type: ignore[no-any-return]


class KernelTransport:
    """A `Kernel` in this process; its calls and streams are the kernel's own `Prepared`
    requests, which are `Exchange`s. Its requests come from code of this process, so they
    are *trusted* (see `ferrule_kernel.trust`): they may name code and files of this
    machine where a plugin allows it, which `ferrule serve` refuses to its network clients."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    def define(self, component_type: str, name: str, attrs: Any, placement: Any) -> Awaiting[None]:
        kernel = self.kernel
        return Awaiting(
            lambda: kernel.define(component_type, name, attrs, placement=placement, trusted=True)
        )

    def delete(self, name: str) -> Awaiting[None]:
        kernel = self.kernel
        return Awaiting(lambda: kernel.delete(name))

    def call(self, target: str, inputs: Any) -> Prepared:
        return self.kernel.prepare(target, inputs, trusted=True)

    def call_method(self, name: str, method: str, inputs: Any) -> Prepared:
        return self.kernel.prepare_method(name, method, inputs, trusted=True)

    def iter(self, target: str, inputs: Any) -> Prepared:
        return self.kernel.prepare(target, inputs, streaming=True, trusted=True)

    def iter_method(self, name: str, method: str, inputs: Any) -> Prepared:
        return self.kernel.prepare_method(name, method, inputs, streaming=True, trusted=True)

    def describe(self, listing: Listing) -> Ready[list[dict[str, Any]]]:
        return Ready(getattr(self.kernel, listing))

    async def aclose(self) -> None:
        await self.kernel.aclose()
