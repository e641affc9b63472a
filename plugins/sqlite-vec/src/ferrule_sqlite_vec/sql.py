"""The filter language of `ferrule_kit.embeddings.vectors` compiled to SQLite SQL over a JSON column.

Every leaf compiles to an expression that is 0 or 1, never NULL (a missing key, a null or
a value of another kind gives 0), so ``NOT`` of any part means exactly "does not hold",
as `ferrule_kit.embeddings.vectors.matches` defines it. Values always travel as parameters; keys are
checked by the filter parser (letters, digits, ``_``, ``-``) and quoted as JSON path
labels.
"""

from __future__ import annotations

from typing import Any

from ferrule_kit.embeddings.vectorfilters import to_sql
from ferrule_kit.embeddings.vectors import Compare, Filter

_ORDER = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _path(key: str) -> str:
    return f'$."{key}"'


def _kind_test(column: str, value: Any) -> str:
    if isinstance(value, bool):
        return f"json_type({column}, ?) = '{'true' if value else 'false'}'"
    if isinstance(value, (int, float)):
        return f"json_type({column}, ?) IN ('integer', 'real')"
    return f"json_type({column}, ?) = 'text'"


def _equal(column: str, key: str, value: Any, params: list[Any]) -> str:
    path = _path(key)
    if isinstance(value, bool):  # the kind says it all
        params.append(path)
        return f"coalesce({_kind_test(column, value)}, 0)"
    params.extend((path, path, value))
    return f"coalesce(({_kind_test(column, value)} AND json_extract({column}, ?) = ?), 0)"


def _leaf(column: str, node: Compare, params: list[Any]) -> str:
    op, key, value = node.op, node.key, node.value
    if op == "$eq":
        return _equal(column, key, value, params)
    if op == "$ne":
        return f"NOT {_equal(column, key, value, params)}"
    if op in ("$in", "$nin"):
        parts = [_equal(column, key, v, params) for v in value]
        any_of = f"({' OR '.join(parts)})" if parts else "0"
        return any_of if op == "$in" else f"NOT {any_of}"
    if op == "$exists":
        params.append(_path(key))
        present = f"coalesce(json_type({column}, ?) NOT IN ('null'), 0)"
        return present if value else f"NOT {present}"
    path = _path(key)
    params.extend((path, path, value))
    return (
        f"coalesce(({_kind_test(column, value)} AND json_extract({column}, ?) {_ORDER[op]} ?), 0)"
    )


def compile_filter(node: Filter | None, column: str, params: list[Any]) -> str:
    """SQL for ``node`` over the JSON text in ``column``; its parameters are appended to
    ``params`` in order. None compiles to ``1`` (every row)."""
    return to_sql(node, lambda compare: _leaf(column, compare, params), true="1")
