"""Components built on other components: the kernel's requests, handed to their factory.

A component type whose description says ``uses_components=True`` gets a second argument
at ``define``: a `ComponentRequests`, the kernel's requests (``define``, ``call``, ``iter``,
``call_method``, ``iter_method``) for that component's own use. With it the factory
defines the components the new one is built on (each named ``"<name>/<role>"``, deleted
with it, and refused to a ``delete`` of its own), and the instance calls them later,
through the same validation and output checks as any caller::

    async def create(attributes: Attributes, requests: ComponentRequests) -> Cache:
        store = await requests.define("key_value_store", "store", {"path": attributes.path})
        return Cache(requests, store)  # later: await requests.call_method(store, ...)

Its requests are as trusted (`ferrule_kernel.trust`) as the ``define`` that made the
component: a component defined by a network client asks as a network client. A method
that passes on what its own caller sent validates it with its own input class first, as
the kernel does for every request, so nothing reaches the components below unchecked.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["ComponentRequests"]


class ComponentRequests:
    """The kernel's requests for the component ``owner`` (see the module docstring)."""

    def __init__(self, kernel: Kernel, owner: str, *, trusted: bool) -> None:
        self._kernel = kernel
        self._owner = owner
        self._trusted = trusted

    def __repr__(self) -> str:
        return f"ComponentRequests(owner={self._owner!r})"

    @property
    def owner(self) -> str:
        """The name of the component these requests are for."""
        return self._owner

    async def define(self, component_type: str, role: str, attributes: Any = None) -> str:
        """Define a component of ``component_type`` that the owner is built on, named
        ``"<owner>/<role>"``, and return that name. It lives as long as the owner (deleted
        with it, and with it when the owner's own define fails)."""
        name = f"{self._owner}/{role}"
        await self._kernel.define(
            component_type, name, attributes, trusted=self._trusted, owner=self._owner
        )
        return name

    async def call(self, operator: str, inputs: Any) -> dict[str, Any]:
        return await self._kernel.call(operator, inputs, trusted=self._trusted)

    def iter(self, target: str, inputs: Any) -> AsyncGenerator[dict[str, Any], None]:
        return self._kernel.iter(target, inputs, trusted=self._trusted)

    async def call_method(self, name: str, method: str, inputs: Any) -> dict[str, Any]:
        return await self._kernel.call_method(name, method, inputs, trusted=self._trusted)

    def iter_method(
        self, name: str, method: str, inputs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        return self._kernel.iter_method(name, method, inputs, trusted=self._trusted)
