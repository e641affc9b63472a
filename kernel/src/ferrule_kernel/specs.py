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

    ``function`` receives one instance of ``inputs`` (an attrs class) and returns an
    attrs instance or a JSON-compatible dict; a streaming operator yields them.
    Sync functions are run in a worker thread by async callers unless ``blocking`` is
    False (for trivial, non-blocking code, where a thread hop would cost more than the call).
    Every output is checked to be JSON; with ``outputs`` (an attrs class, or its
    ``"module:attr"``) it is also checked against that class, field by field.
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
    #: The class each output (each item, for a stream) must match; None: any JSON object.
    outputs: type | str | None = None


@attrs.frozen
class MethodSpec:
    """A method of a component type; same rules as `OperatorSpec`, the target is an attribute name.

    Two opt-ins let a method speak another runtime's protocol (Ailoy 0.1's vector stores
    take ``insert_many([...])`` and answer ``remove`` with ``true``):
    ``array_input`` names the field of ``inputs`` that an input sent as a bare JSON array
    fills (``[...]`` is taken as ``{array_input: [...]}``); with ``value_output`` the
    method's result may be any JSON value (``true``, ``null``), not only an object.
    """

    name: str
    inputs: type | str
    streaming: bool = False
    blocking: bool = True
    description: str = ""
    converter: Any = attrs.field(default=None, eq=False, repr=False)
    outputs: type | str | None = None
    array_input: str | None = None
    value_output: bool = False


@attrs.frozen
class ComponentTypeSpec:
    """A stateful component type, instantiated with ``define(type, name, attrs)``.

    ``factory`` is called with one instance of ``attributes`` (sync factories run in a
    worker thread; a coroutine result is awaited). The instance's methods named in
    ``methods`` are what ``call_method`` / ``iter`` reach. If it has ``close()`` (sync
    or async), ``delete`` calls it. ``aliases`` are other names accepted for this type
    (e.g. a type named after another engine).
    """

    name: str
    factory: Target
    attributes: type | str
    methods: tuple[MethodSpec, ...] = attrs.field(converter=_as_tuple)
    aliases: tuple[str, ...] = attrs.field(default=(), converter=_as_tuple)
    description: str = ""
    converter: Any = attrs.field(default=None, eq=False, repr=False)

    def method(self, name: str) -> MethodSpec | None:
        for spec in self.methods:
            if spec.name == name:
                return spec
        return None
