"""What FAISS itself adds: its distances agree with a brute-force reference for each
metric, a filter reaches FAISS as an id selector, and the short name ``faiss`` defines it."""

from __future__ import annotations

import random

import pytest
from ferrule import Runtime
from ferrule_kit.embeddings.vectors import UnsupportedOperationError
from ferrule_kit.testing.vectors import reference_distance


@pytest.mark.parametrize("metric", ["cosine", "dot", "l2"])
def test_distances_match_a_brute_force_reference(metric: str) -> None:
    rng = random.Random(7)
    vectors = {f"c{i}": [rng.uniform(-1, 1) for _ in range(8)] for i in range(40)}
    query = [rng.uniform(-1, 1) for _ in range(8)]
    with Runtime() as rt:
        rt.define("faiss_store", "kb", {"distance": metric})
        rt.call_method(
            "kb", "upsert", {"chunks": [{"id": k, "vector": v} for k, v in vectors.items()]}
        )
        found = rt.call_method("kb", "search", {"vector": query, "top_k": 5})["matches"]
    expected = sorted(vectors, key=lambda k: reference_distance(metric, query, vectors[k]))[:5]
    assert [m["id"] for m in found] == expected
    for m in found:
        assert m["distance"] == pytest.approx(
            reference_distance(metric, query, vectors[m["id"]]), abs=1e-5
        )


def test_a_filter_keeps_only_passing_chunks_even_when_others_are_nearer() -> None:
    with Runtime() as rt:
        rt.define("faiss", "kb", {})  # the alias
        rt.call_method(
            "kb",
            "upsert",
            {
                "chunks": [
                    {"id": "near", "vector": [1.0, 0.0], "metadata": {"lang": "en"}},
                    {"id": "far", "vector": [0.0, 1.0], "metadata": {"lang": "ko"}},
                ]
            },
        )
        found = rt.call_method(
            "kb", "search", {"vector": [1.0, 0.1], "top_k": 2, "filter": {"lang": "ko"}}
        )["matches"]
        assert [m["id"] for m in found] == ["far"]
        assert rt.call_method("kb", "info", {})["keyword_search"] is False
        with pytest.raises(UnsupportedOperationError, match="no keyword search"):
            rt.call_method("kb", "keyword_search", {"query": "anything"})


def test_equal_distances_come_in_insertion_order() -> None:
    with Runtime() as rt:
        rt.define("faiss_store", "kb", {})
        ids = [f"same{i}" for i in range(6)]
        for chunk_id in ids:  # one upsert each: insertion order is call order
            rt.call_method("kb", "upsert", {"chunks": [{"id": chunk_id, "vector": [0.5, 0.5]}]})
        found = rt.call_method("kb", "search", {"vector": [1.0, 1.0], "top_k": 4})["matches"]
    assert [m["id"] for m in found] == ids[:4]
