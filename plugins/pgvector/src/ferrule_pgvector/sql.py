"""The filter language of `ferrule_kit.embeddings.vectors` compiled to PostgreSQL over a JSONB column.

Every leaf is ``true`` or ``false``, never NULL (a missing key, a null or a value of
another kind gives false), so ``NOT`` of any part means "does not hold", as
`ferrule_kit.embeddings.vectors.matches` defines it. Values travel as parameters; keys (checked by
the filter parser) travel as parameters too. Kinds are tested with ``jsonb_typeof``
inside ``CASE`` (whose order PostgreSQL keeps, unlike ``AND``'s), so no value is ever
compared with one of another kind; strings compare by code point (``COLLATE "C"``),
numbers as numerics.
"""

from __future__ import annotations

import json
from typing import Any

from ferrule_kit.embeddings.vectorfilters import to_sql
from ferrule_kit.embeddings.vectors import Compare, Filter

_ORDER = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _equal(key: str, value: Any, params: list[Any]) -> str:
    # jsonb equality: same kind and value (1 = 1.0; true is not 1; "1" is not 1)
    params.extend((key, json.dumps(value)))
    return "coalesce(metadata -> %s = %s::jsonb, false)"


def _leaf(node: Compare, params: list[Any]) -> str:
    op, key, value = node.op, node.key, node.value
    if op == "$eq":
        return _equal(key, value, params)
    if op == "$ne":
        return f"NOT {_equal(key, value, params)}"
    if op in ("$in", "$nin"):
        parts = [_equal(key, v, params) for v in value]
        any_of = f"({' OR '.join(parts)})" if parts else "false"
        return any_of if op == "$in" else f"NOT {any_of}"
    if op == "$exists":
        params.append(key)
        present = "coalesce(jsonb_typeof(metadata -> %s) <> 'null', false)"
        return present if value else f"NOT {present}"
    params.extend((key, key, value))
    if isinstance(value, str):
        return (
            "(CASE WHEN jsonb_typeof(metadata -> %s) = 'string' "
            f'THEN (metadata ->> %s) COLLATE "C" {_ORDER[op]} %s ELSE false END)'
        )
    return (
        "(CASE WHEN jsonb_typeof(metadata -> %s) = 'number' "
        f"THEN (metadata ->> %s)::numeric {_ORDER[op]} %s ELSE false END)"
    )


def compile_filter(node: Filter | None, params: list[Any]) -> str:
    """SQL for ``node`` over the ``metadata`` column; its parameters are appended to
    ``params`` in order. None compiles to ``true``."""
    return to_sql(node, lambda compare: _leaf(compare, params))
