"""The embedder and vector-store contracts' own pieces: input validation naming the field,
the filter language's parser and reference semantics, vectors and metadata round trips."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from ferrule_kernel import InvalidInputError, structure_input
from ferrule_kit.embeddings.embedding import EmbedderUnavailableError, EmbedInput, check_vectors
from ferrule_kit.embeddings.vectors import (
    DeleteInput,
    ReplaceDocumentsInput,
    SearchInput,
    UpsertInput,
    content_hash,
    converter,
    matches,
    parse_filter,
)
from ferrule_kit.testing.vectors import random_filter, random_metadata
from hypothesis import given
from hypothesis import strategies as st

finite = st.floats(allow_nan=False, allow_infinity=False, width=32)
scalars = st.one_of(st.text(max_size=8), st.integers(-(2**40), 2**40), finite, st.booleans())
json_values = st.recursive(
    st.one_of(st.none(), scalars),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-]{0,10}", fullmatch=True)


def structure(data: Any, cls: type) -> Any:
    return structure_input(data, cls, target="test", conv=converter)


def paths(error: pytest.ExceptionInfo[InvalidInputError]) -> list[str]:
    return [e["path"] for e in error.value.errors]


# -- vectors and chunks ---------------------------------------------------------------------


@given(st.lists(st.one_of(finite, st.integers(-1000, 1000)), min_size=1, max_size=64))
def test_finite_numbers_structure_to_the_same_floats(values: list[Any]) -> None:
    got = structure({"vector": values}, SearchInput).vector
    assert got == [float(v) for v in values]
    assert all(type(x) is float for x in got)


@given(
    st.lists(finite, min_size=1, max_size=16),
    st.integers(0, 16),
    st.sampled_from([math.nan, math.inf, -math.inf, "1.0", True, None, [1.0]]),
)
def test_a_bad_number_is_refused_naming_its_index(values: list[float], at: int, bad: Any) -> None:
    at = min(at, len(values))
    values = [*values[:at], bad, *values[at:]]
    with pytest.raises(InvalidInputError) as error:
        structure({"vector": values}, SearchInput)
    assert paths(error) == [f"$.vector[{at}]"]


@given(
    st.dictionaries(st.text(max_size=10), json_values, max_size=5),
    st.text(max_size=40),
    st.one_of(st.none(), st.text(min_size=1, max_size=20)),
)
def test_chunks_round_trip(metadata: dict[str, Any], text: str, document: str | None) -> None:
    wire = {
        "id": "c1",
        "vector": [0.5, -1.0],
        "text": text,
        "document_id": document,
        "content_hash": None,
        "metadata": metadata,
    }
    chunk = structure({"chunks": [wire]}, UpsertInput).chunks[0]
    assert chunk.to_dict() == wire
    assert json.loads(json.dumps(chunk.to_dict())) == json.loads(json.dumps(wire))


@pytest.mark.parametrize(
    ("data", "cls", "field"),
    [
        (
            {"chunks": [{"id": "a", "vector": [1.0]}, {"id": "a", "vector": [1.0]}]},
            UpsertInput,
            "$.chunks[1].id",
        ),
        ({"chunks": [{"id": "x" * 513, "vector": [1.0]}]}, UpsertInput, "$.chunks[0].id"),
        (
            {"chunks": [{"id": "a", "vector": [1.0]}]},
            ReplaceDocumentsInput,
            "$.chunks[0].document_id",
        ),
        ({"chunks": []}, ReplaceDocumentsInput, "$.chunks"),
        ({"document_ids": [""]}, DeleteInput, "$.document_ids[0]"),
        ({"ids": ["a"], "document_ids": ["b"]}, DeleteInput, "$"),
        ({"vector": [1.0], "top_k": 1001}, SearchInput, "$.top_k"),
        ({"vector": [1.0], "extra": 1}, SearchInput, "$.extra"),
    ],
)
def test_bad_store_input_names_the_field(data: Any, cls: type, field: str) -> None:
    with pytest.raises(InvalidInputError) as error:
        structure(data, cls)
    assert field in paths(error)


def test_content_hash_is_sha256_of_the_utf8_text() -> None:
    assert content_hash("a") == (
        "sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
    )
    assert content_hash("é") != content_hash("e")


def test_replace_documents_clears_named_and_own_documents() -> None:
    inputs = structure(
        {
            "chunks": [{"id": "a", "vector": [1.0], "document_id": "d2"}],
            "document_ids": ["d1", "d2"],
        },
        ReplaceDocumentsInput,
    )
    assert inputs.all_document_ids() == ["d1", "d2"]


# -- the filter language ------------------------------------------------------------------

operands = st.one_of(scalars.filter(lambda v: not isinstance(v, float) or math.isfinite(v)))


@st.composite
def filters(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    kind = draw(st.integers(0, 9 if depth < 2 else 6))
    key = draw(keys)
    if kind == 0:
        return {key: draw(operands)}
    if kind in (1, 2, 3, 4):
        op = draw(st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]))
        value = draw(operands)
        if op in ("$gt", "$gte", "$lt", "$lte") and isinstance(value, bool):
            value = int(value)
        return {key: {op: value}}
    if kind == 5:
        return {key: {draw(st.sampled_from(["$in", "$nin"])): draw(st.lists(operands, max_size=3))}}
    if kind == 6:
        return {key: {"$exists": draw(st.booleans())}}
    if kind == 7:
        return {"$and": draw(st.lists(filters(depth + 1), max_size=3))}
    if kind == 8:
        return {"$or": draw(st.lists(filters(depth + 1), min_size=1, max_size=3))}
    return {"$not": draw(filters(depth + 1))}


metadata = st.dictionaries(keys, json_values, max_size=4)


@given(filters())
def test_every_sentence_of_the_language_parses(raw: dict[str, Any]) -> None:
    structure({"vector": [1.0], "filter": raw}, SearchInput).where  # noqa: B018


@given(filters(), metadata)
def test_not_is_negation(raw: dict[str, Any], meta: dict[str, Any]) -> None:
    assert matches(parse_filter({"$not": raw}), meta) is not matches(parse_filter(raw), meta)


@given(keys, operands, metadata)
def test_ne_and_nin_negate_eq_and_in(key: str, value: Any, meta: dict[str, Any]) -> None:
    eq = matches(parse_filter({key: {"$eq": value}}), meta)
    assert matches(parse_filter({key: value}), meta) is eq
    assert matches(parse_filter({key: {"$ne": value}}), meta) is not eq
    assert matches(parse_filter({key: {"$in": [value]}}), meta) is eq
    assert matches(parse_filter({key: {"$nin": [value]}}), meta) is not eq


@given(st.lists(filters(), max_size=3), metadata)
def test_and_or_are_all_and_any(parts: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    each = [matches(parse_filter(p), meta) for p in parts]
    assert matches(parse_filter({"$and": parts}), meta) is all(each)
    if parts:
        assert matches(parse_filter({"$or": parts}), meta) is any(each)


def test_kinds_never_mix() -> None:
    meta = {"n": 1, "f": 1.0, "b": True, "s": "1", "none": None, "list": [1]}
    assert matches(parse_filter({"n": 1.0}), meta) and matches(parse_filter({"f": 1}), meta)
    assert not matches(parse_filter({"b": 1}), meta), "true is not 1"
    assert not matches(parse_filter({"n": True}), meta)
    assert not matches(parse_filter({"s": 1}), meta), '"1" is not 1'
    assert not matches(parse_filter({"s": {"$gt": 0}}), meta), "no order across kinds"
    assert not matches(parse_filter({"none": {"$exists": True}}), meta), "null is absent"
    assert not matches(parse_filter({"list": 1}), meta), "lists are not filtered on"
    assert matches(parse_filter({"list": {"$ne": 1}}), meta)
    assert matches(parse_filter({"s": {"$lt": "a"}}), meta), "strings by code point"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"a": {"$regex": "x"}}, "$.filter.a.$regex"),
        ({"a": {}}, "$.filter.a"),
        ({"a": {"$in": "x"}}, "$.filter.a.$in"),
        ({"a": {"$in": [1, {"b": 2}]}}, "$.filter.a.$in[1]"),
        ({"a": {"$gt": True}}, "$.filter.a.$gt"),
        ({"a": {"$exists": 1}}, "$.filter.a.$exists"),
        ({"$or": [{"a": 1}, {"$and": {"b": 1}}]}, "$.filter.$or[1].$and"),
        ({"$not": [1]}, "$.filter.$not"),
        ({"1a": 1}, "$.filter.1a"),
        ({"a.b": 1}, "$.filter.a.b"),
        ({"a": None}, "$.filter.a"),
    ],
)
def test_bad_filters_name_the_part(raw: Any, field: str) -> None:
    with pytest.raises(InvalidInputError) as error:
        structure({"vector": [1.0], "filter": raw}, SearchInput)
    assert paths(error) == [field]


def test_the_suites_generators_cover_the_language() -> None:
    import random

    rng = random.Random(0)
    seen = json.dumps([random_filter(rng) for _ in range(300)])
    for op in ("$and", "$or", "$not", "$eq", "$ne", "$gt", "$in", "$nin", "$exists"):
        assert op in seen
    assert any("tag" in random_metadata(rng) for _ in range(50))


# -- embedder contract ------------------------------------------------------------------------


def test_embed_input_names_the_field() -> None:
    with pytest.raises(InvalidInputError) as error:
        structure_input({"texts": ["ok", ""]}, EmbedInput, target="embed")
    assert paths(error) == ["$.texts[1]"]


def test_check_vectors_refuses_what_a_model_must_not_pass_on() -> None:
    assert check_vectors([[1.0, 2.0], [3.0, 4.0]], 2, None, who="m") == 2
    for vectors, count, dimension in (
        ([[1.0]], 2, None),
        ([[1.0], [1.0, 2.0]], 2, None),
        ([[1.0, 2.0]], 1, 3),
        ([[math.nan]], 1, None),
        ("nope", 1, None),
    ):
        with pytest.raises(EmbedderUnavailableError) as error:
            check_vectors(vectors, count, dimension, who="m")
        assert error.value.details["embedder"] == "m"
