"""`AiloyVectorStoreConformance`: Ailoy 0.1's vector-store methods
(`ferrule_kit.ailoy_vectors`) as a test suite, for a store described with
``vector_store_type(..., ailoy_v0_1=True)``.

Subclass it with the same ``store`` fixture as `VectorStoreConformance` (a
`VectorStoreUnderTest`; ``make(collection, dimension=...)`` must give a cosine store)::

    class TestMyStoreAiloy(AiloyVectorStoreConformance):
        store = TestMyStoreConformance.store

Checked, through the kernel's requests: ``insert_many`` taking a bare list and answering
ids in order; ``get_by_id`` giving back document and metadata (``null`` kept) and the
vector's direction, and ``null`` for an unknown id; ``retrieve`` nearest first with
``similarity`` the cosine, from 0 to 1 for non-negative vectors, against brute force;
``remove`` and ``clear`` answering ``true`` and seen by the contract's ``count``; the
same store seen through both protocols; a wrong dimension or a missing field refused
naming the field, before anything is written.
"""

from __future__ import annotations

import math
import random

import pytest
from ferrule_kernel import InvalidInputError

from ..vectors import DimensionMismatchError
from .vectors import VectorStoreUnderTest

__all__ = ["AiloyVectorStoreConformance"]

DIMENSION = 10


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.hypot(*a) * math.hypot(*b))


def _vectors(rng: random.Random, n: int) -> list[list[float]]:
    # Ailoy's tests embed with Math.random(): non-negative components
    return [[rng.random() + 1e-3 for _ in range(DIMENSION)] for _ in range(n)]


class AiloyVectorStoreConformance:
    """The suite; see the module docstring. Override the ``store`` fixture."""

    @pytest.fixture
    def store(self) -> VectorStoreUnderTest:
        pytest.fail("an AiloyVectorStoreConformance subclass must override the 'store' fixture")

    async def test_ailoy_insert_many_get_retrieve_remove_clear(
        self, store: VectorStoreUnderTest
    ) -> None:
        vs = await store.make("ailoy_roundtrip", dimension=DIMENSION)
        rng = random.Random(1)
        vectors = _vectors(rng, 2)
        items = [
            {"embedding": vectors[0], "document": "doc1", "metadata": {"value": 1}},
            {"embedding": vectors[1], "document": "doc2", "metadata": None},
        ]
        inserted = await store.runtime.call_method(vs, "insert_many", items)
        ids = inserted["ids"]
        assert len(ids) == 2 and len(set(ids)) == 2

        got = await store.call(vs, "get_by_id", {"id": ids[0]})
        assert (got["id"], got["document"], got["metadata"]) == (ids[0], "doc1", {"value": 1})
        assert _cosine(got["embedding"], vectors[0]) == pytest.approx(1.0, abs=1e-5)
        second = await store.call(vs, "get_by_id", {"id": ids[1]})
        assert (second["document"], second["metadata"]) == ("doc2", None)

        found = (await store.call(vs, "retrieve", {"query_embedding": vectors[0], "top_k": 2}))[
            "results"
        ]
        assert [r["id"] for r in found] == ids
        assert [(r["document"], r["metadata"]) for r in found] == [
            ("doc1", {"value": 1}),
            ("doc2", None),
        ]
        assert found[0]["similarity"] == pytest.approx(1.0, abs=1e-5)
        assert found[1]["similarity"] == pytest.approx(_cosine(vectors[0], vectors[1]), abs=1e-4)
        assert all(0.0 <= round(r["similarity"], 6) <= 1.0 for r in found)

        assert await store.call(vs, "remove", {"id": ids[0]}) is True
        assert await store.call(vs, "get_by_id", {"id": ids[0]}) is None
        assert (await store.call(vs, "count", {}))["count"] == 1
        assert await store.call(vs, "clear", {}) is True
        assert (await store.call(vs, "count", {}))["count"] == 0
        assert await store.call(vs, "get_by_id", {"id": ids[1]}) is None

    async def test_ailoy_retrieve_orders_as_brute_force(self, store: VectorStoreUnderTest) -> None:
        vs = await store.make("ailoy_order", dimension=DIMENSION)
        rng = random.Random(7)
        vectors = _vectors(rng, 12)
        items = [{"embedding": v, "document": f"doc{i}"} for i, v in enumerate(vectors)]
        ids = (await store.runtime.call_method(vs, "insert_many", items))["ids"]
        assert (await store.call(vs, "insert", {"embedding": vectors[0], "document": "again"}))[
            "id"
        ] not in ids
        query = _vectors(rng, 1)[0]
        found = (await store.call(vs, "retrieve", {"query_embedding": query, "top_k": 5}))[
            "results"
        ]
        similarities = [r["similarity"] for r in found]
        assert similarities == sorted(similarities, reverse=True)
        by_id = dict(zip(ids, vectors, strict=True))
        for result in found:
            vector = by_id.get(result["id"], vectors[0])
            assert result["similarity"] == pytest.approx(_cosine(query, vector), abs=1e-4)
        best = max(_cosine(query, v) for v in vectors)
        assert similarities[0] == pytest.approx(best, abs=1e-4)

    async def test_ailoy_and_contract_see_one_store(self, store: VectorStoreUnderTest) -> None:
        vs = await store.make("ailoy_both", dimension=DIMENSION)
        vector = _vectors(random.Random(3), 1)[0]
        new_id = (await store.call(vs, "insert", {"embedding": vector, "document": "one"}))["id"]
        chunks = (await store.call(vs, "get", {"ids": [new_id]}))["chunks"]
        assert [(c["id"], c["text"], c["metadata"]) for c in chunks] == [(new_id, "one", {})]
        chunk = {"id": "c1", "vector": vector, "text": "two", "metadata": {"k": "v"}}
        await store.call(vs, "upsert", {"chunks": [chunk]})
        got = await store.call(vs, "get_by_id", {"id": "c1"})
        assert (got["document"], got["metadata"]) == ("two", {"k": "v"})

    async def test_ailoy_bad_input_names_the_field(self, store: VectorStoreUnderTest) -> None:
        vs = await store.make("ailoy_bad", dimension=DIMENSION)
        good = {"embedding": [0.5] * DIMENSION, "document": "ok"}
        with pytest.raises(DimensionMismatchError) as wrong:
            await store.runtime.call_method(
                vs, "insert_many", [good, {"embedding": [1.0, 2.0], "document": "x"}]
            )
        assert [e["path"] for e in wrong.value.errors] == ["$.items[1].embedding"]
        assert (await store.call(vs, "count", {}))["count"] == 0  # nothing written
        with pytest.raises(InvalidInputError) as missing:
            await store.runtime.call_method(vs, "insert_many", [{"embedding": [0.5] * DIMENSION}])
        assert [e["path"] for e in missing.value.errors] == ["$.items[0].document"]
        with pytest.raises(InvalidInputError) as metadata:
            await store.call(vs, "insert", {**good, "metadata": [1, 2]})
        assert [e["path"] for e in metadata.value.errors] == ["$.metadata"]
        with pytest.raises(DimensionMismatchError) as query:
            await store.call(vs, "retrieve", {"query_embedding": [1.0], "top_k": 1})
        assert [e["path"] for e in query.value.errors] == ["$.query_embedding"]
        with pytest.raises(InvalidInputError) as top_k:
            await store.call(vs, "retrieve", {"query_embedding": [0.5] * DIMENSION, "top_k": 0})
        assert [e["path"] for e in top_k.value.errors] == ["$.top_k"]
        with pytest.raises(InvalidInputError) as no_id:
            await store.call(vs, "remove", {})
        assert [e["path"] for e in no_id.value.errors] == ["$.id"]
        with pytest.raises(InvalidInputError) as empty_id:
            await store.call(vs, "get_by_id", {"id": ""})
        assert [e["path"] for e in empty_id.value.errors] == ["$.id"]
        with pytest.raises(DimensionMismatchError) as one:
            await store.call(vs, "insert", {"embedding": [1.0], "document": "x"})
        assert [e["path"] for e in one.value.errors] == ["$.embedding"]
        assert (await store.call(vs, "count", {}))["count"] == 0
