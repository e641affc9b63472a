"""ferrule_kit.embeddings.vectorfilters.to_sql: a filter's AND / OR / NOT as SQL over the comparisons
a store writes in its own dialect (ferrule-pgvector's and ferrule-sqlite-vec's filters)."""

from __future__ import annotations

from typing import Any

from ferrule_kit.embeddings.vectorfilters import Compare, parse_filter, to_sql


def compile_with_marks(obj: Any, true: str = "true") -> tuple[str, list[Any]]:
    params: list[Any] = []

    def leaf(compare: Compare) -> str:
        params.append(compare.value)
        return f"{compare.key} {compare.op} ?"

    return to_sql(parse_filter(obj), leaf, true=true), params


def test_structure_is_parenthesised_and_parameters_follow_the_sql_order():
    sql, params = compile_with_marks(
        {"$or": [{"year": {"$gt": 2000}}, {"$not": {"lang": "en"}}], "kind": "paper"}
    )
    assert sql == "((year $gt ? OR (NOT lang $eq ?)) AND kind $eq ?)"
    assert params == [2000, "en", "paper"]


def test_no_filter_and_an_empty_and_are_the_dialects_true():
    assert to_sql(None, lambda compare: "never", true="1") == "1"
    assert compile_with_marks({"$and": []}, true="1") == ("1", [])
    assert compile_with_marks({}) == ("true", [])
