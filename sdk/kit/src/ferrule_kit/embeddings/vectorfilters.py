"""The vector stores' filter language: parsing a ``filter`` and the reference semantics.

The filter language (``filter`` fields; parsed by `parse_filter`, which names the bad
part, e.g. ``$.filter.$or[1].year.$gt: expected a number, got string``)::

    filter   := {clause, ...}                     every clause holds (an empty filter: all)
    clause   := "$and": [filter, ...]             every filter holds
              | "$or":  [filter, ...]             at least one holds (non-empty list)
              | "$not": filter                    the filter does not hold
              | KEY: SCALAR                       shorthand for KEY: {"$eq": SCALAR}
              | KEY: {OP: OPERAND, ...}           every operator holds
    OP       := "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte"   OPERAND: SCALAR
              | "$in" | "$nin"                                     OPERAND: [SCALAR, ...]
              | "$exists"                                          OPERAND: true | false
    SCALAR   := string | finite number | boolean
    KEY      := a metadata key: letters, digits, "_" or "-", starting with a letter or
                "_", at most 64 characters

Semantics, the same in every store (`matches` is the reference): values compare only
with values of their own kind: numbers (integers and floats alike) with numbers,
strings with strings (by code point), booleans with booleans (only ``$eq``, ``$ne``,
``$in``, ``$nin``). A comparison with a missing key, a null, a list or an object, or
across kinds, is false; ``$ne`` and ``$nin`` are its negations, so they hold there.
Metadata values may be any JSON (they round-trip as given), but only scalar values are
filtered on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, type_name

__all__ = [
    "COMPARISONS",
    "ORDERED",
    "And",
    "Compare",
    "Filter",
    "Not",
    "Or",
    "matches",
    "parse_filter",
    "to_sql",
]

Scalar = str | int | float | bool


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}")
COMPARISONS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
ORDERED = ("$gt", "$gte", "$lt", "$lte")


@attrs.frozen
class Compare:
    """``key op value``: op is one of `COMPARISONS`, ``$in``/``$nin`` (value: a tuple), or
    ``$exists`` (value: a bool)."""

    key: str
    op: str
    value: Any


@attrs.frozen
class And:
    children: tuple[Filter, ...]


@attrs.frozen
class Or:
    children: tuple[Filter, ...]


@attrs.frozen
class Not:
    child: Filter


Filter = Compare | And | Or | Not


def _scalar(value: Any, where: str) -> Scalar:
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise InvalidInputError("must be a finite number", field=where)
        return value
    raise InvalidInputError(
        f"expected a string, number or boolean, got {type_name(value)}", field=where
    )


def _key_path(where: str, key: str) -> str:
    return f"{where}.{key}"


def _parse(obj: Any, where: str) -> Filter:
    if not isinstance(obj, Mapping):
        raise InvalidInputError(f"expected object, got {type_name(obj)}", field=where)
    clauses: list[Filter] = []
    for key, value in obj.items():
        at = _key_path(where, str(key))
        if key in ("$and", "$or"):
            if not isinstance(value, list):
                raise InvalidInputError(f"expected array, got {type_name(value)}", field=at)
            if key == "$or" and not value:
                raise InvalidInputError("must not be empty", field=at)
            children = tuple(_parse(v, f"{at}[{i}]") for i, v in enumerate(value))
            clauses.append(And(children) if key == "$and" else Or(children))
        elif key == "$not":
            clauses.append(Not(_parse(value, at)))
        elif not isinstance(key, str) or not _KEY.fullmatch(key):
            raise InvalidInputError(
                "not a metadata key or operator: keys are letters, digits, '_' or '-', "
                "starting with a letter or '_' (at most 64)",
                field=at,
            )
        elif isinstance(value, Mapping):
            if not value:
                raise InvalidInputError("expected at least one operator", field=at)
            clauses.extend(_operators(key, value, at))
        else:
            clauses.append(Compare(key, "$eq", _scalar(value, at)))
    return clauses[0] if len(clauses) == 1 else And(tuple(clauses))


def _operators(key: str, ops: Mapping[str, Any], where: str) -> list[Filter]:
    out: list[Filter] = []
    for op, operand in ops.items():
        at = _key_path(where, str(op))
        if op in COMPARISONS:
            value = _scalar(operand, at)
            if op in ORDERED and isinstance(value, bool):
                raise InvalidInputError("booleans are not ordered: use $eq or $ne", field=at)
            out.append(Compare(key, op, value))
        elif op in ("$in", "$nin"):
            if not isinstance(operand, list):
                raise InvalidInputError(f"expected array, got {type_name(operand)}", field=at)
            values = tuple(_scalar(v, f"{at}[{i}]") for i, v in enumerate(operand))
            out.append(Compare(key, op, values))
        elif op == "$exists":
            if not isinstance(operand, bool):
                raise InvalidInputError(f"expected boolean, got {type_name(operand)}", field=at)
            out.append(Compare(key, op, operand))
        else:
            raise InvalidInputError(
                f"unknown operator {op!r}: use one of "
                + ", ".join((*COMPARISONS, "$in", "$nin", "$exists")),
                field=at,
            )
    return out


def parse_filter(obj: Any, where: str = "filter") -> Filter | None:
    """Parse the filter language (see the module docstring) into a tree; None for an empty
    filter. Errors are `InvalidInputError` naming the bad part under ``where``."""
    if obj is None:
        return None
    if isinstance(obj, Mapping) and not obj:
        return None
    return _parse(obj, where)


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _equal(stored: Any, value: Any) -> bool:
    kind = _kind(stored)
    return kind is not None and kind == _kind(value) and stored == value


def _holds(node: Compare, metadata: Mapping[str, Any]) -> bool:
    present = node.key in metadata and metadata[node.key] is not None
    stored = metadata.get(node.key)
    op, value = node.op, node.value
    if op == "$exists":
        return present is value
    if op == "$eq":
        return _equal(stored, value)
    if op == "$ne":
        return not _equal(stored, value)
    if op == "$in":
        return any(_equal(stored, v) for v in value)
    if op == "$nin":
        return not any(_equal(stored, v) for v in value)
    kind = _kind(stored)
    if kind is None or kind == "boolean" or kind != _kind(value):
        return False
    if op == "$gt":
        return bool(stored > value)
    if op == "$gte":
        return bool(stored >= value)
    if op == "$lt":
        return bool(stored < value)
    return bool(stored <= value)


def matches(node: Filter | None, metadata: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` passes the filter: the reference semantics every store follows."""
    if node is None:
        return True
    if isinstance(node, Compare):
        return _holds(node, metadata)
    if isinstance(node, And):
        return all(matches(c, metadata) for c in node.children)
    if isinstance(node, Or):
        return any(matches(c, metadata) for c in node.children)
    return not matches(node.child, metadata)


def to_sql(node: Filter | None, leaf: Callable[[Compare], str], *, true: str = "true") -> str:
    """SQL for ``node``: its AND, OR and NOT, parenthesised, over comparisons that ``leaf``
    writes in the store's own SQL (appending their parameters as it goes: the comparisons
    are written in the order the SQL reads them). None and an empty AND are ``true``, the
    dialect's literal for a condition every row meets."""
    if node is None:
        return true
    if isinstance(node, Compare):
        return leaf(node)
    if isinstance(node, And):
        parts = [to_sql(c, leaf, true=true) for c in node.children]
        return f"({' AND '.join(parts)})" if parts else true
    if isinstance(node, Or):
        return f"({' OR '.join(to_sql(c, leaf, true=true) for c in node.children)})"
    return f"(NOT {to_sql(node.child, leaf, true=true)})"
