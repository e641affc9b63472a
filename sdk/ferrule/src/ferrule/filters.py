"""Agno's filter expressions for knowledge searches (``from ferrule.filters import EQ, AND``).

Each expression is a small value object: ``EQ("year", 2024)``, ``IN("tag", ["a", "b"])``,
``AND(EQ("kind", "faq"), NOT(LT("year", 2020)))``; ``&``,
``|`` and ``~`` combine them. ``to_dict()`` gives Agno's dict shape (``{"op": "EQ", "key":
..., "value": ...}``) and `from_dict` reads it back, refusing nesting deeper than
`MAX_FILTER_DEPTH`. ``to_filter()`` gives the same condition in the vector stores' filter
language (`ferrule_kit.embeddings.vectorfilters`), which is what `Knowledge.search(filters=...)` and
the stores run: ``EQ`` is ``$eq``, ``IN`` ``$in``... ``CONTAINS`` and ``STARTSWITH`` are
refused (`NO_TEXT_MATCH`): the stores' language compares whole values; a text match inside
a value is not in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferrule_kernel import InvalidInputError

__all__ = [
    "AND",
    "CONTAINS",
    "EQ",
    "GT",
    "GTE",
    "IN",
    "LT",
    "LTE",
    "MAX_FILTER_DEPTH",
    "NEQ",
    "NOT",
    "NO_TEXT_MATCH",
    "OR",
    "STARTSWITH",
    "FilterExpr",
    "from_dict",
]

#: How deeply expressions may nest in `from_dict` (a dict from outside cannot recurse
#: without end).
MAX_FILTER_DEPTH: int = 10


class FilterExpr:
    """A condition on a document's metadata."""

    def __or__(self, other: FilterExpr) -> OR:
        return OR(self, other)

    def __and__(self, other: FilterExpr) -> AND:
        return AND(self, other)

    def __invert__(self) -> NOT:
        return NOT(self)

    def to_dict(self) -> dict[str, Any]:
        """Agno's dict shape of this expression."""
        raise NotImplementedError(f"{type(self).__name__} does not define to_dict")

    def to_filter(self) -> dict[str, Any]:
        """This condition in the vector stores' filter language."""
        raise NotImplementedError(f"{type(self).__name__} does not define to_filter")

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    __hash__ = None  # type: ignore[assignment]


class _Comparison(FilterExpr):
    """``key`` compared with ``value`` by the store operator `OPERATOR`."""

    OP = ""
    OPERATOR = ""

    def __init__(self, key: str, value: Any) -> None:
        self.key = key
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.OP, "key": self.key, "value": self.value}

    def to_filter(self) -> dict[str, Any]:
        return {self.key: {self.OPERATOR: self.value}}


class EQ(_Comparison):
    """``key`` equals ``value``."""

    key: str
    value: Any
    OP, OPERATOR = "EQ", "$eq"


class NEQ(_Comparison):
    """``key`` does not equal ``value`` (a document without ``key`` matches)."""

    key: str
    value: Any
    OP, OPERATOR = "NEQ", "$ne"


class GT(_Comparison):
    """``key`` is greater than ``value``."""

    key: str
    value: Any
    OP, OPERATOR = "GT", "$gt"


class GTE(_Comparison):
    """``key`` is greater than or equal to ``value``."""

    key: str
    value: Any
    OP, OPERATOR = "GTE", "$gte"


class LT(_Comparison):
    """``key`` is less than ``value``."""

    key: str
    value: Any
    OP, OPERATOR = "LT", "$lt"


class LTE(_Comparison):
    """``key`` is less than or equal to ``value``."""

    key: str
    value: Any
    OP, OPERATOR = "LTE", "$lte"


NO_TEXT_MATCH = (
    "CONTAINS / STARTSWITH: the vector stores' filter language compares whole values (EQ, "
    "IN, GT...); match text inside a value with a keyword or hybrid search instead"
)


class CONTAINS(_Comparison):
    """Refused (`NO_TEXT_MATCH`)."""

    key: str
    value: Any
    OP, OPERATOR = "CONTAINS", "$contains"

    def __init__(self, key: str, value: str) -> None:
        raise InvalidInputError(NO_TEXT_MATCH, field="filters")


class STARTSWITH(_Comparison):
    """Refused (`NO_TEXT_MATCH`)."""

    key: str
    value: Any
    OP, OPERATOR = "STARTSWITH", "$startswith"

    def __init__(self, key: str, value: str) -> None:
        raise InvalidInputError(NO_TEXT_MATCH, field="filters")


class IN(FilterExpr):
    """``key`` is one of ``values``."""

    key: str
    values: list[Any]

    def __init__(self, key: str, values: list[Any]) -> None:
        self.key = key
        self.values = values

    def to_dict(self) -> dict[str, Any]:
        return {"op": "IN", "key": self.key, "values": self.values}

    def to_filter(self) -> dict[str, Any]:
        return {self.key: {"$in": list(self.values)}}


class AND(FilterExpr):
    """Every expression holds."""

    expressions: list[FilterExpr]

    def __init__(self, *expressions: FilterExpr) -> None:
        self.expressions = list(expressions)

    def to_dict(self) -> dict[str, Any]:
        return {"op": "AND", "conditions": [e.to_dict() for e in self.expressions]}

    def to_filter(self) -> dict[str, Any]:
        return {"$and": [e.to_filter() for e in self.expressions]}


class OR(FilterExpr):
    """At least one expression holds."""

    expressions: list[FilterExpr]

    def __init__(self, *expressions: FilterExpr) -> None:
        self.expressions = list(expressions)

    def to_dict(self) -> dict[str, Any]:
        return {"op": "OR", "conditions": [e.to_dict() for e in self.expressions]}

    def to_filter(self) -> dict[str, Any]:
        if not self.expressions:
            raise InvalidInputError("OR needs at least one expression", field="filters")
        return {"$or": [e.to_filter() for e in self.expressions]}


class NOT(FilterExpr):
    """The expression does not hold."""

    expression: FilterExpr

    def __init__(self, expression: FilterExpr) -> None:
        self.expression = expression

    def to_dict(self) -> dict[str, Any]:
        return {"op": "NOT", "condition": self.expression.to_dict()}

    def to_filter(self) -> dict[str, Any]:
        return {"$not": self.expression.to_filter()}


_COMPARISONS: dict[str, type[_Comparison]] = {
    cls.OP: cls for cls in (EQ, NEQ, GT, GTE, LT, LTE, CONTAINS, STARTSWITH)
}


def from_dict(filter_dict: dict[str, Any], where: str = "filters") -> FilterExpr:
    """The expression of Agno's dict shape (what ``to_dict`` gives); a malformed dict is an
    `InvalidInputError` naming the bad part."""
    return _read(filter_dict, where, 0)


def _read(data: Any, where: str, depth: int) -> FilterExpr:
    if depth > MAX_FILTER_DEPTH:
        raise InvalidInputError(f"nested deeper than {MAX_FILTER_DEPTH}", field=where)
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"expected an object, got {type(data).__name__}", field=where)
    op = str(data.get("op", "")).upper()
    if op in ("AND", "OR"):
        conditions = data.get("conditions")
        if not isinstance(conditions, list):
            raise InvalidInputError("expected a list", field=f"{where}.conditions")
        children = [
            _read(c, f"{where}.conditions[{i}]", depth + 1) for i, c in enumerate(conditions)
        ]
        return AND(*children) if op == "AND" else OR(*children)
    if op == "NOT":
        return NOT(_read(data.get("condition"), f"{where}.condition", depth + 1))
    key = data.get("key")
    if not isinstance(key, str):
        raise InvalidInputError("expected a metadata key (text)", field=f"{where}.key")
    if op == "IN":
        values = data.get("values")
        if not isinstance(values, list):
            raise InvalidInputError("expected a list", field=f"{where}.values")
        return IN(key, values)
    if op in _COMPARISONS:
        if "value" not in data:
            raise InvalidInputError("required field missing", field=f"{where}.value")
        return _COMPARISONS[op](key, data["value"])
    known = ", ".join(["AND", "OR", "NOT", "IN", *_COMPARISONS])
    raise InvalidInputError(f"unknown op {data.get('op')!r}; one of {known}", field=f"{where}.op")


def as_store_filter(filters: Any) -> dict[str, Any] | None:
    """What a knowledge search was given (a dict of the stores' language, or Agno's
    expressions: one or a list, all of which hold) as the stores' filter language."""
    if filters is None:
        return None
    if isinstance(filters, FilterExpr):
        return filters.to_filter()
    if isinstance(filters, (list, tuple)):
        if not all(isinstance(f, FilterExpr) for f in filters):
            raise InvalidInputError("expected filter expressions (EQ, IN, AND...)", field="filters")
        return AND(*filters).to_filter() if filters else None
    if isinstance(filters, Mapping):
        return dict(filters)
    raise InvalidInputError(
        f"expected a dict or filter expressions, got {type(filters).__name__}", field="filters"
    )
