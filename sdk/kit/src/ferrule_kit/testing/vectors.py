"""`VectorStoreConformance`: the vector-store contract of `ferrule_kit.embeddings.vectors` as a test
suite that every store plugin (ours or a third party's) runs against itself.

Subclass it and provide a ``store`` fixture yielding a `VectorStoreUnderTest`: a runtime
(``ferrule.AsyncRuntime``) and a ``make`` coroutine that defines a store component on a
fresh, empty collection with the given attributes and returns its name::

    class TestMyStoreConformance(VectorStoreConformance):
        @pytest.fixture
        async def store(self, tmp_path):
            async with AsyncRuntime() as rt:
                async def make(collection: str, **attributes: Any) -> str:
                    await rt.define("my_store", collection, {"path": ..., "collection": collection, **attributes})
                    return collection
                yield VectorStoreUnderTest(rt, make, keyword_search=True)

Checked: collections (created, checked, refused on another dimension or distance);
chunks round-tripping exactly (text, ids, content hashes, any JSON metadata; vectors to
float32 precision); upsert replacing by id; a wrong dimension refused before anything is
written; search against exact nearest neighbours for all three distances, with
distances and scores as the contract defines them; the filter language against the
reference `ferrule_kit.embeddings.vectors.matches` on a few hundred generated filters (search,
count and delete); delete by ids, documents and filter; replace_documents replacing a
document's chunks, leaving others, and changing nothing when refused; documents()
reporting content hashes; keyword search (or its refusal); bad input naming the field.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest
from ferrule_kernel import FerruleError, InvalidInputError

from ferrule_kit.embeddings.vectors import DimensionMismatchError, matches, parse_filter

__all__ = [
    "VectorStoreConformance",
    "VectorStoreUnderTest",
    "random_filter",
    "random_metadata",
    "reference_distance",
]


@attrs.define
class VectorStoreUnderTest:
    #: A ``ferrule.AsyncRuntime`` (or anything with its ``call_method``).
    runtime: Any
    #: ``await make(collection, **attributes)`` defines a store on a new collection and
    #: returns the component's name.
    make: Callable[..., Awaitable[str]]
    keyword_search: bool = False
    #: Whether ``search`` is exact (brute force); an approximate index sets a recall bar.
    exact: bool = True

    async def call(self, component: str, method: str, inputs: dict[str, Any]) -> Any:
        return await self.runtime.call_method(component, method, inputs)


# -- generated data ----------------------------------------------------------------------

COLORS = ["red", "green", "blue", "Red", "ünïcode", ""]
KEYS = ["color", "year", "score", "flag", "tag", "missing"]


def random_metadata(rng: random.Random) -> dict[str, Any]:
    """Metadata mixing kinds under the same keys, nulls, lists and absent keys: what the
    filter semantics must get right."""
    out: dict[str, Any] = {}
    if rng.random() < 0.85:
        out["color"] = rng.choice([*COLORS, 3, None])
    if rng.random() < 0.85:
        out["year"] = rng.choice([1851, 1900, 1925, 2001, 2001.5, -3, "1900", True])
    if rng.random() < 0.7:
        out["score"] = round(rng.uniform(-1, 1), 3)
    if rng.random() < 0.6:
        out["flag"] = rng.choice([True, False, 0, 1, "true"])
    if rng.random() < 0.3:
        out["tag"] = rng.choice([["a", "b"], {"nested": 1}, "a"])
    return out


def _scalar(rng: random.Random, key: str) -> Any:
    pools = {
        "color": [*COLORS, 3],
        "year": [1851, 1900, 1900.0, 2001, 2001.5, "1900", -3],
        "score": [0, 0.5, -0.25, 1, "0.5"],
        "flag": [True, False, 1, 0, "true"],
        "tag": ["a", "b", 1],
        "missing": ["x", 1, True],
    }
    return rng.choice(pools[key])


def random_filter(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    """A random filter over `random_metadata`'s keys, using every part of the language."""
    roll = rng.random()
    if depth < 2 and roll < 0.12:
        return {"$and": [random_filter(rng, depth + 1) for _ in range(rng.randint(0, 3))]}
    if depth < 2 and roll < 0.24:
        return {"$or": [random_filter(rng, depth + 1) for _ in range(rng.randint(1, 3))]}
    if depth < 2 and roll < 0.3:
        return {"$not": random_filter(rng, depth + 1)}
    key = rng.choice(KEYS)
    op = rng.choice(["short", "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"])
    if op == "short":
        return {key: _scalar(rng, key)}
    if op in ("$in", "$nin"):
        return {key: {op: [_scalar(rng, key) for _ in range(rng.randint(0, 3))]}}
    if op == "$exists":
        return {key: {op: rng.random() < 0.5}}
    value = _scalar(rng, key)
    if op in ("$gt", "$gte", "$lt", "$lte") and isinstance(value, bool):
        value = int(value)
    clause = {key: {op: value}}
    if rng.random() < 0.2:  # two clauses in one object: an implicit AND
        other = rng.choice(KEYS)
        clause[other] = _scalar(rng, other)
    return clause


def _vector(rng: random.Random, dimension: int) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(dimension)]


def reference_distance(metric: str, a: list[float], b: list[float]) -> float:
    """The contract's distance of two vectors under ``metric`` (``cosine``: ``1 - cos``,
    ``dot``: ``-a.b``, ``l2``: Euclidean), computed by hand: what a store's search is
    checked against."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    if metric == "dot":
        return -dot
    if metric == "l2":
        return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))
    return 1 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _chunks(rng: random.Random, n: int, dimension: int, documents: int = 5) -> list[dict[str, Any]]:
    return [
        {
            "id": f"c{i}",
            "document_id": f"doc{i % documents}",
            "text": f"chunk {i} of document {i % documents}",
            "vector": _vector(rng, dimension),
            "metadata": random_metadata(rng),
            "content_hash": f"sha256:{i % documents:064x}",
        }
        for i in range(n)
    ]


def _close(a: list[float], b: list[float]) -> bool:
    # float32 storage: about 7 significant digits
    return len(a) == len(b) and all(
        abs(x - y) <= 1e-6 * max(1.0, abs(x)) for x, y in zip(a, b, strict=True)
    )


class VectorStoreConformance:
    """The conformance suite; see the module docstring. Override the ``store`` fixture."""

    @pytest.fixture
    def store(self) -> VectorStoreUnderTest:
        pytest.fail("a VectorStoreConformance subclass must override the 'store' fixture")

    # -- collections -------------------------------------------------------------------

    async def test_store_collection_lifecycle(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("lifecycle")
        info = await store.call(kb, "info", {})
        assert info["collection"] == "lifecycle"
        assert info["count"] == 0 and info["exists"] is False
        assert info["keyword_search"] is store.keyword_search
        made = await store.call(kb, "ensure_collection", {"dimension": 8, "distance": "l2"})
        assert (made["dimension"], made["distance"], made["exists"]) == (8, "l2", True)
        again = await store.call(kb, "ensure_collection", {"dimension": 8, "distance": "l2"})
        assert again["dimension"] == 8
        for other in ({"dimension": 9, "distance": "l2"}, {"dimension": 8, "distance": "cosine"}):
            with pytest.raises(DimensionMismatchError) as error:
                await store.call(kb, "ensure_collection", other)
            assert error.value.details["collection"] == "lifecycle"
        assert (await store.call(kb, "info", {}))["dimension"] == 8

    async def test_store_dimension_from_attributes(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("attrdim", dimension=4, distance="dot")
        info = await store.call(kb, "info", {})
        assert (info["exists"], info["dimension"], info["distance"]) == (True, 4, "dot")

    async def test_store_first_upsert_creates_collection(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("lazy")
        await store.call(kb, "upsert", {"chunks": [{"id": "a", "vector": [1.0, 0.0, 0.0]}]})
        info = await store.call(kb, "info", {})
        assert (info["dimension"], info["distance"], info["count"]) == (3, "cosine", 1)

    # -- chunks ------------------------------------------------------------------------

    async def test_store_round_trip(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("roundtrip")
        rng = random.Random(7)
        chunks = _chunks(rng, 40, 12)
        chunks[0]["metadata"] = {
            "nested": {"a": [1, 2.5, None, True]},
            "text": "quote ' and \" and ünïcode 🚀",
            "big": 2**53,
            "neg": -0.0001,
        }
        chunks[1]["text"] = "line one\nline two\ttab \\ back"
        chunks[2].pop("document_id")
        chunks[2].pop("content_hash")
        assert (await store.call(kb, "upsert", {"chunks": chunks}))["upserted"] == 40
        got = await store.call(
            kb, "get", {"ids": [c["id"] for c in chunks] + ["nope"], "include_vectors": True}
        )
        by_id = {c["id"]: c for c in got["chunks"]}
        assert set(by_id) == {c["id"] for c in chunks}, "every chunk back, absent ids left out"
        for sent in chunks:
            back = by_id[sent["id"]]
            assert back["text"] == sent["text"]
            assert back["metadata"] == sent["metadata"]
            assert back["document_id"] == sent.get("document_id")
            assert back["content_hash"] == sent.get("content_hash")
            assert _close(back["vector"], sent["vector"])
        plain = await store.call(kb, "get", {"ids": ["c3"]})
        assert "vector" not in plain["chunks"][0]

    async def test_store_upsert_replaces_by_id(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("replace_id")
        await store.call(
            kb, "upsert", {"chunks": [{"id": "a", "vector": [1.0, 0.0], "text": "old"}]}
        )
        await store.call(
            kb, "upsert", {"chunks": [{"id": "a", "vector": [0.0, 1.0], "text": "new"}]}
        )
        assert (await store.call(kb, "count", {}))["count"] == 1
        back = (await store.call(kb, "get", {"ids": ["a"], "include_vectors": True}))["chunks"][0]
        assert back["text"] == "new" and _close(back["vector"], [0.0, 1.0])

    async def test_store_wrong_dimension_writes_nothing(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("wrongdim", dimension=4)
        good = {"id": "ok", "vector": [0.1, 0.2, 0.3, 0.4]}
        bad = {"id": "bad", "vector": [0.1, 0.2, 0.3]}
        with pytest.raises(DimensionMismatchError) as error:
            await store.call(kb, "upsert", {"chunks": [good, bad]})
        assert error.value.details["expected"] == 4 and error.value.details["got"] == [3]
        assert [e["path"] for e in error.value.errors] == ["$.chunks[1].vector"]
        assert (await store.call(kb, "count", {}))["count"] == 0, "not even the good chunk"
        with pytest.raises(DimensionMismatchError):
            await store.call(kb, "search", {"vector": [0.1, 0.2]})

    # -- search ------------------------------------------------------------------------

    @pytest.mark.parametrize("metric", ["cosine", "l2", "dot"])
    async def test_store_search_is_nearest_first(
        self, store: VectorStoreUnderTest, metric: str
    ) -> None:
        kb = await store.make(f"near_{metric}", distance=metric)
        rng = random.Random(11)
        chunks = _chunks(rng, 300, 16)
        await store.call(kb, "upsert", {"chunks": chunks})
        for _ in range(5):
            query = _vector(rng, 16)
            found = (await store.call(kb, "search", {"vector": query, "top_k": 10}))["matches"]
            exact = sorted(chunks, key=lambda c: reference_distance(metric, query, c["vector"]))[
                :10
            ]
            ids = [m["id"] for m in found]
            if store.exact:
                assert ids == [c["id"] for c in exact]
            else:
                assert len(set(ids) & {c["id"] for c in exact}) >= 8
            for m in found:
                sent = chunks[int(m["id"][1:])]
                want = reference_distance(metric, query, sent["vector"])
                assert abs(m["distance"] - want) < 1e-4 * max(1.0, abs(want))
                expected_score = 1 - m["distance"] if metric == "cosine" else -m["distance"]
                assert abs(m["score"] - expected_score) < 1e-6
                assert m["text"] == sent["text"] and m["metadata"] == sent["metadata"]
                assert m["document_id"] == sent["document_id"]
                assert m["content_hash"] == sent["content_hash"]
            distances = [m["distance"] for m in found]
            assert distances == sorted(distances)

    async def test_store_search_empty_and_small(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("small", dimension=3)
        assert (await store.call(kb, "search", {"vector": [1.0, 0.0, 0.0]}))["matches"] == []
        await store.call(kb, "upsert", {"chunks": [{"id": "only", "vector": [1.0, 0.0, 0.0]}]})
        found = await store.call(kb, "search", {"vector": [1.0, 0.0, 0.0], "top_k": 5})
        assert [m["id"] for m in found["matches"]] == ["only"]
        missing = await store.make("never_created")
        assert (await store.call(missing, "count", {}))["count"] == 0
        assert (await store.call(missing, "search", {"vector": [1.0]}))["matches"] == []

    async def test_store_filters_match_the_reference(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("filters")
        rng = random.Random(2024)
        chunks = _chunks(rng, 160, 4)
        await store.call(kb, "upsert", {"chunks": chunks})
        checked = 0
        for _ in range(250):
            raw = random_filter(rng)
            tree = parse_filter(raw)
            want = {c["id"] for c in chunks if matches(tree, c["metadata"])}
            got = (await store.call(kb, "count", {"filter": raw}))["count"]
            assert got == len(want), f"count with {raw}: store {got}, reference {len(want)}"
            found = await store.call(
                kb, "search", {"vector": _vector(rng, 4), "top_k": 1000, "filter": raw}
            )
            ids = {m["id"] for m in found["matches"]}
            assert ids == want, f"search with {raw}: extra {ids - want}, missing {want - ids}"
            checked += bool(want) and len(want) < len(chunks)
        assert checked > 50, "the generated filters select something, not all"

    async def test_store_search_filter_and_top_k(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("filtertopk")
        rng = random.Random(5)
        chunks = _chunks(rng, 120, 8)
        for i, c in enumerate(chunks):
            c["metadata"] = {"parity": "even" if i % 2 == 0 else "odd", "i": i}
        await store.call(kb, "upsert", {"chunks": chunks})
        query = _vector(rng, 8)
        found = await store.call(
            kb,
            "search",
            {"vector": query, "top_k": 7, "filter": {"parity": "odd", "i": {"$gte": 50}}},
        )
        want = [
            c["id"]
            for c in sorted(chunks, key=lambda c: reference_distance("cosine", query, c["vector"]))
            if c["metadata"]["parity"] == "odd" and c["metadata"]["i"] >= 50
        ][:7]
        assert [m["id"] for m in found["matches"]] == want

    # -- delete and documents --------------------------------------------------------------

    async def test_store_delete(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("deletes")
        rng = random.Random(3)
        chunks = _chunks(rng, 50, 4, documents=5)
        await store.call(kb, "upsert", {"chunks": chunks})
        assert (await store.call(kb, "delete", {"ids": ["c0", "c1", "nope"]}))["deleted"] == 2
        assert (await store.call(kb, "delete", {"document_ids": ["doc4"]}))["deleted"] == 10
        raw = {"year": {"$gte": 1900}}
        tree = parse_filter(raw)
        left = [c for c in chunks[2:] if c["document_id"] != "doc4"]
        want = sum(matches(tree, c["metadata"]) for c in left)
        assert (await store.call(kb, "delete", {"filter": raw}))["deleted"] == want
        assert (await store.call(kb, "count", {}))["count"] == len(left) - want
        assert (await store.call(kb, "count", {"filter": raw}))["count"] == 0

    async def test_store_replace_documents(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("replacedocs")
        rng = random.Random(9)
        chunks = _chunks(rng, 30, 4, documents=3)  # doc0, doc1, doc2: 10 chunks each
        await store.call(kb, "upsert", {"chunks": chunks})
        new = [
            {
                "id": f"doc1-v2-{i}",
                "document_id": "doc1",
                "text": f"new {i}",
                "vector": _vector(rng, 4),
                "content_hash": "sha256:v2",
            }
            for i in range(4)
        ]
        result = await store.call(kb, "replace_documents", {"chunks": new})
        assert result == {"deleted": 10, "inserted": 4}
        docs = await store.call(kb, "documents", {"document_ids": ["doc0", "doc1", "gone"]})
        by_id = {d["document_id"]: d for d in docs["documents"]}
        assert set(by_id) == {"doc0", "doc1"}
        assert by_id["doc1"] == {
            "document_id": "doc1",
            "chunks": 4,
            "content_hashes": ["sha256:v2"],
        }
        assert by_id["doc0"]["chunks"] == 10
        assert by_id["doc0"]["content_hashes"] == [chunks[0]["content_hash"]]
        # refused (wrong dimension): nothing changes, the old version stays whole
        bad = [{**new[0], "id": "doc1-v3", "vector": [0.5, 0.5]}]
        with pytest.raises(DimensionMismatchError):
            await store.call(kb, "replace_documents", {"chunks": bad, "document_ids": ["doc0"]})
        assert (await store.call(kb, "count", {}))["count"] == 24
        # removing documents: no chunks, named ids
        gone = await store.call(kb, "replace_documents", {"chunks": [], "document_ids": ["doc2"]})
        assert gone == {"deleted": 10, "inserted": 0}
        assert (await store.call(kb, "count", {}))["count"] == 14

    # -- keywords ----------------------------------------------------------------------

    async def test_store_keyword_search(self, store: VectorStoreUnderTest) -> None:
        kb = await store.make("keywords", dimension=2)
        texts = [
            "The whale surfaced near the Pequod at dawn.",
            "Ahab paced the deck, thinking of the white whale.",
            "Queequeg sharpened his harpoon in silence.",
            "The crew ate biscuits and talked of home.",
        ]
        chunks = [
            {"id": f"k{i}", "text": t, "vector": [1.0, float(i)], "metadata": {"n": i}}
            for i, t in enumerate(texts)
        ]
        await store.call(kb, "upsert", {"chunks": chunks})
        if not store.keyword_search:
            with pytest.raises(FerruleError) as error:
                await store.call(kb, "keyword_search", {"query": "whale"})
            assert error.value.kind == "unsupported_operation"
            return
        found = await store.call(kb, "keyword_search", {"query": "harpoon"})
        assert [m["id"] for m in found["matches"]] == ["k2"]
        whales = await store.call(kb, "keyword_search", {"query": "whale", "top_k": 10})
        assert {m["id"] for m in whales["matches"]} == {"k0", "k1"}
        scores = [m["score"] for m in whales["matches"]]
        assert scores == sorted(scores, reverse=True)
        filtered = await store.call(
            kb, "keyword_search", {"query": "whale", "filter": {"n": {"$gt": 0}}}
        )
        assert [m["id"] for m in filtered["matches"]] == ["k1"]
        # punctuation and operators in a user's query are words, not syntax
        odd = await store.call(kb, "keyword_search", {"query": 'whale" (deck NEAR -ahab*'})
        assert {m["id"] for m in odd["matches"]} == {"k0", "k1"}
        await store.call(kb, "delete", {"ids": ["k2"]})
        assert (await store.call(kb, "keyword_search", {"query": "harpoon"}))["matches"] == []

    # -- bad input ---------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("method", "inputs", "field"),
        [
            ("search", {"vector": [1.0, "x"]}, "$.vector[1]"),
            ("search", {"vector": [1.0], "top_k": 0}, "$.top_k"),
            ("search", {"vector": []}, "$.vector"),
            ("search", {"vector": [1.0], "filter": {"a": {"$near": 1}}}, "$.filter.a.$near"),
            ("search", {"vector": [1.0], "filter": {"$or": []}}, "$.filter.$or"),
            ("search", {"vector": [1.0], "filter": {"a": [1]}}, "$.filter.a"),
            ("count", {"filter": {"bad key": 1}}, "$.filter.bad key"),
            ("upsert", {"chunks": [{"id": "", "vector": [1.0]}]}, "$.chunks[0].id"),
            ("upsert", {"chunks": [{"id": "a"}]}, "$.chunks[0].vector"),
            ("delete", {}, "$"),
            ("delete", {"filter": {}}, "$.filter"),
            ("ensure_collection", {"dimension": 0}, "$.dimension"),
            ("ensure_collection", {"dimension": 3, "distance": "hamming"}, "$.distance"),
            ("keyword_search", {"query": " "}, "$.query"),
        ],
    )
    async def test_store_bad_input_names_the_field(
        self, store: VectorStoreUnderTest, method: str, inputs: dict[str, Any], field: str
    ) -> None:
        kb = await store.make("badinput")
        with pytest.raises(InvalidInputError) as error:
            await store.call(kb, method, inputs)
        paths = [e["path"] for e in error.value.errors]
        assert any(p == field or p.startswith(field) for p in paths), f"{field} not in {paths}"
