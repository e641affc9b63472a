"""Descriptions that plugins return from their registration hooks.

A description names its implementation as a ``"module:attribute"`` string, so the kernel
can list what is installed (names, input schemas, providing distribution) without
importing any plugin's heavy dependencies; the code is imported on first use. Input and
attribute classes, and converters, may be named the same way when importing them would
cost a cold start something (the kernel imports them at the first request that needs
them, or when schemas are listed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Union

import attrs


def _as_tuple(items: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(items)


#: An implementation: the object itself, or ``"package.module:attribute"`` imported on first use.
Target = Union[str, Callable[..., Any]]  # noqa: UP007 (a runtime alias)


@attrs.frozen
class OperatorSpec:
    """A stateless operator, called with ``call`` (or ``iter`` when ``streaming``).

    ``function`` receives the request's input structured as ``inputs`` and returns an
    attrs instance or a JSON-compatible dict; a streaming operator yields them.
    ``inputs`` is an attrs class (the input is a JSON object of its fields), or any other
    type made of JSON-compatible parts, which the converter structures as it would a
    field of that type (``list[Item]``: the input is a JSON array of ``Item`` objects;
    ``Item | None``: an object or null).
    Sync functions are run in a worker thread by async callers unless ``blocking`` is
    False (for trivial, non-blocking code, where a thread hop would cost more than the call).
    Every output is checked to be JSON; with ``outputs`` (or its ``"module:attr"``) it is
    also checked against that type: an attrs class field by field; any other type made of
    JSON-compatible parts (``bool``, ``Item | None``) lets an output be a JSON value of
    that type that is not an object (``true``, ``null``). Without ``outputs``, each output
    is a JSON object.
    """

    name: str
    function: Target
    inputs: type | str
    streaming: bool = False
    blocking: bool = True
    description: str = ""
    #: cattrs converter for ``inputs`` and attrs outputs (or its ``"module:attr"``);
    #: the kernel's strict one if None.
    converter: Any = attrs.field(default=None, eq=False, repr=False)
    #: The type each output (each item, for a stream) must match; None: any JSON object.
    outputs: type | str | None = None


@attrs.frozen
class MethodSpec:
    """A method of a component type; same rules as `OperatorSpec`, the target is an attribute name."""

    name: str
    inputs: type | str
    streaming: bool = False
    blocking: bool = True
    description: str = ""
    converter: Any = attrs.field(default=None, eq=False, repr=False)
    outputs: type | str | None = None


@attrs.frozen
class ComponentTypeSpec:
    """A stateful component type, instantiated with ``define(type, name, attrs)``.

    ``factory`` is called with one instance of ``attributes`` (sync factories run in a
    worker thread; a coroutine result is awaited). The instance's methods named in
    ``methods`` are what ``call_method`` / ``iter`` reach. If it has ``close()`` (sync
    or async), ``delete`` calls it. ``aliases`` are other names accepted for this type
    (e.g. a type named after another engine).

    ``uses_components``: the component is built on other components. Its factory is
    called with a second argument, a `ferrule_kernel.ComponentRequests`, through which it
    defines them (they are deleted with it) and which its instance keeps to call them.
    """

    name: str
    factory: Target
    attributes: type | str
    methods: tuple[MethodSpec, ...] = attrs.field(converter=_as_tuple)
    aliases: tuple[str, ...] = attrs.field(default=(), converter=_as_tuple)
    description: str = ""
    converter: Any = attrs.field(default=None, eq=False, repr=False)
    uses_components: bool = False

    def method(self, name: str) -> MethodSpec | None:
        for spec in self.methods:
            if spec.name == name:
                return spec
        return None
