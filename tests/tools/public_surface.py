"""Dump ferrule's public surface as text, to compare before and after a restructuring.

    python tests/tools/public_surface.py > /tmp/surface_before.txt
    ... change things ...
    python tests/tools/public_surface.py > /tmp/surface_after.txt
    diff /tmp/surface_before.txt /tmp/surface_after.txt

Every public name of ``ferrule`` and ``ferrule.agent`` (their ``__all__``, the lazy ones
too) and of the modules users import from (``ferrule.tools``, ``ferrule.run``...), each
with what it is; for every public class among them, each public member: a method with its
signature (overloads listed one per line, as `typing.get_overloads` has them), whether it
is async, and its docstring; a property or attribute with its annotation. Names starting
with ``_`` are left out, ``__init__`` / ``__call__`` / ``__iter__`` / ``__aiter__`` /
``__await__`` / ``__enter__`` / ``__aenter__`` are kept (users call them).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import typing
from typing import Any

#: The modules whose public names are dumped (what users import from).
MODULES = (
    "ferrule",
    "ferrule.agent",
    "ferrule.agent.configs",
    "ferrule.agent.events",
    "ferrule.agent.hooks",
    "ferrule.agent.memory",
    "ferrule.tools",
    "ferrule.run",
    "ferrule.exceptions",
)

#: The dunder members users call, kept in the dump.
CALLED_DUNDERS = {
    "__init__",
    "__new__",
    "__call__",
    "__iter__",
    "__aiter__",
    "__await__",
    "__enter__",
    "__exit__",
    "__aenter__",
    "__aexit__",
    "__getitem__",
    "__len__",
    "__add__",
    "__iadd__",
}


def _doc(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split())


def _signature(function: Any) -> str:
    try:
        return str(inspect.signature(function))
    except (TypeError, ValueError):
        return "(?)"


def _overloads(function: Any) -> list[str]:
    if sys.version_info < (3, 11):
        return []
    try:
        return [_signature(o) for o in typing.get_overloads(function)]
    except Exception:
        return []


def _function_lines(name: str, function: Any, indent: str) -> list[str]:
    is_async = inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)
    lines = [f"{indent}{'async ' if is_async else ''}def {name}{_signature(function)}"]
    lines += [f"{indent}  @overload {name}{o}" for o in _overloads(function)]
    lines.append(f"{indent}  doc: {_doc(function)}")
    return lines


def _member_lines(cls: type, name: str) -> list[str]:
    raw = inspect.getattr_static(cls, name)
    indent = "    "
    if isinstance(raw, property):
        hint = raw.fget.__annotations__.get("return", "?") if raw.fget else "?"
        return [f"{indent}property {name} -> {hint}", f"{indent}  doc: {_doc(raw)}"]
    if isinstance(raw, (classmethod, staticmethod)):
        kind = type(raw).__name__
        return [f"{indent}@{kind}", *_function_lines(name, raw.__func__, indent)]
    value = getattr(cls, name, None)
    if callable(value) and not isinstance(value, type):
        return _function_lines(name, value, indent)
    if isinstance(value, type):
        return [f"{indent}class {name}"]
    hints = {}
    for base in reversed(cls.__mro__):
        hints.update(getattr(base, "__annotations__", {}))
    return [f"{indent}attribute {name}: {hints.get(name, type(value).__name__)}"]


def _class_lines(qualified: str, cls: type) -> list[str]:
    bases = ", ".join(b.__qualname__ for b in cls.__bases__)
    lines = [f"class {qualified}({bases})", f"  doc: {_doc(cls)}"]
    names = set()
    for klass in cls.__mro__:
        if klass is object or klass.__module__.startswith(("builtins", "typing", "abc", "enum")):
            continue
        names |= set(vars(klass))
    # attrs fields and annotated attributes (instance attributes users read)
    for klass in cls.__mro__:
        names |= set(getattr(klass, "__annotations__", {}))
    for name in sorted(names):
        if name.startswith("_") and name not in CALLED_DUNDERS:
            continue
        try:
            lines += _member_lines(cls, name)
        except AttributeError:
            hints = {}
            for base in reversed(cls.__mro__):
                hints.update(getattr(base, "__annotations__", {}))
            lines.append(f"    attribute {name}: {hints.get(name, '?')}")
    return lines


def _public_names(module: Any) -> list[str]:
    names = set(getattr(module, "__all__", ()))
    names |= set(getattr(module, "_LAZY", {}))
    if not names:
        names = {n for n in vars(module) if not n.startswith("_")}
    return sorted(names)


def dump() -> list[str]:
    lines: list[str] = [f"# python {sys.version_info.major}.{sys.version_info.minor}"]
    seen: set[int] = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        lines.append(f"\n## module {module_name}")
        for name in _public_names(module):
            value = getattr(module, name)
            where = getattr(value, "__module__", None)
            if isinstance(value, type):
                if id(value) in seen:
                    lines.append(f"class {module_name}.{name} (see above: {value.__qualname__})")
                    continue
                seen.add(id(value))
                lines += _class_lines(f"{module_name}.{name}", value)
            elif inspect.ismodule(value):
                lines.append(f"module {module_name}.{name} = {value.__name__}")
            elif callable(value):
                lines += _function_lines(f"{module_name}.{name}", value, "")
            else:
                lines.append(f"value {module_name}.{name}: {type(value).__name__} ({where})")
    return lines


if __name__ == "__main__":
    print("\n".join(dump()))
