"""Searching a knowledge base: by meaning (``"vector"``), by words (``"keyword"``) or both
fused by reciprocal rank (``"hybrid"``), over a store and an embedder component."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ferrule_kernel import InvalidInputError
from ferrule_kit.embeddings.vectors import MAX_TOP_K

from .document import Document
from .vectordb import SEARCH_TYPES

__all__ = ["HYBRID_CANDIDATES", "RRF_K", "check_search", "fuse", "search"]

#: Hybrid search: candidates taken from each ranking (at least), and the fusion's constant.
HYBRID_CANDIDATES = 50
RRF_K = 60


def check_search(query: Any, top_k: Any, search_type: Any) -> None:
    """`InvalidInputError` naming the field for a bad query, ``max_results`` or type."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("must be a non-empty string", field="query")
    if search_type not in SEARCH_TYPES:
        raise InvalidInputError(
            f"expected one of {', '.join(SEARCH_TYPES)}, got {search_type!r}",
            field="search_type",
        )
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidInputError(f"must be an integer from 1 to {MAX_TOP_K}", field="max_results")


async def search(
    runtime: Any,
    store: str,
    embedder: str,
    query: str,
    *,
    top_k: int,
    filters: dict[str, Any] | None,
    search_type: str,
) -> list[Document]:
    """The ``top_k`` chunks best matching ``query`` (checked by `check_search`), best first."""
    if search_type == "keyword":
        matches = await _keyword_matches(runtime, store, query, top_k, filters)
    elif search_type == "vector":
        matches = await _vector_matches(runtime, store, embedder, query, top_k, filters)
    else:
        # Each ranking's candidates, fused by reciprocal rank: a chunk high in both
        # comes first, one found by words alone (a name, a rare term) still shows.
        candidates = min(max(top_k * 4, HYBRID_CANDIDATES), MAX_TOP_K)
        by_vector, by_keyword = await asyncio.gather(
            _vector_matches(runtime, store, embedder, query, candidates, filters),
            _keyword_matches(runtime, store, query, candidates, filters),
        )
        matches = fuse([by_vector, by_keyword])[:top_k]
    return [
        Document(
            content=m["text"],
            id=m["id"],
            name=m["metadata"].get("name"),
            meta_data=m["metadata"],
            content_id=m["document_id"],
            score=m["score"],
        )
        for m in matches
    ]


async def _vector_matches(
    runtime: Any,
    store: str,
    embedder: str,
    query: str,
    top_k: int,
    filters: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    out = await runtime.acall_method(embedder, "embed", {"texts": [query], "input_type": "query"})
    found = await runtime.acall_method(
        store, "search", {"vector": out["vectors"][0], "top_k": top_k, "filter": filters}
    )
    matches: list[dict[str, Any]] = found["matches"]
    return matches


async def _keyword_matches(
    runtime: Any, store: str, query: str, top_k: int, filters: dict[str, Any] | None
) -> list[dict[str, Any]]:
    found = await runtime.acall_method(
        store, "keyword_search", {"query": query, "top_k": top_k, "filter": filters}
    )
    matches: list[dict[str, Any]] = found["matches"]
    return matches


def fuse(rankings: Sequence[list[dict[str, Any]]], k: int = RRF_K) -> list[dict[str, Any]]:
    """Reciprocal rank fusion: each match scores ``sum(1 / (k + rank))`` over the rankings
    it is in (rank from 1); best first, its ``score`` that sum."""
    scores: dict[str, float] = {}
    best: dict[str, dict[str, Any]] = {}
    for ranking in rankings:
        for rank, match in enumerate(ranking, 1):
            scores[match["id"]] = scores.get(match["id"], 0.0) + 1.0 / (k + rank)
            best.setdefault(match["id"], match)
    order = sorted(scores, key=lambda ident: -scores[ident])
    return [{**best[ident], "score": scores[ident]} for ident in order]
