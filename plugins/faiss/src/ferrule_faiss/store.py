"""The `faiss_store` component: `ferrule_kit.embeddings.vectors`' contract over a FAISS index.

The vectors live in a flat FAISS index wrapped in an ``IndexIDMap2`` (so chunks keep
their int ids across deletes); the chunks' text, metadata and hashes in a dict beside it.
Flat means exact: every stored vector is compared, which is what FAISS does fastest on a
CPU up to a few million vectors and what the contract's exact-search tests expect.

- ``cosine``: vectors are stored L2-normalised in an inner-product index; distance is
  ``1 - cos``.
- ``dot``: an inner-product index; distance is ``-a.b``.
- ``l2``: an L2 index (FAISS gives squared distances; the contract's is the root).

A metadata filter becomes the set of chunks that pass it (`ferrule_kit.embeddings.vectorfilters`'
reference semantics) and an ``IDSelectorBatch``: FAISS scores only those. Equal distances
are ordered by insertion, as the other stores order by row id.

The store is in memory: it lives as long as its component.
There is no keyword search.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import attrs
from ferrule_kit.embeddings.vectors import (
    Chunk,
    CountInput,
    DeleteInput,
    DocumentsInput,
    EnsureCollectionInput,
    GetInput,
    InfoInput,
    KeywordSearchInput,
    ReplaceDocumentsInput,
    SearchInput,
    UpsertInput,
    check_collection,
    check_dimension,
    check_query_dimension,
    match,
    matches,
    no_keyword_search,
    score,
)
from ferrule_kit.embeddings.vectorspec import VectorStoreAttributes

from .plugin import COMPONENT_TYPE


@attrs.frozen
class _Stored:
    key: int  # the int id in the FAISS index; also the insertion order
    chunk: Chunk


class FaissStore:
    """The contract's methods on a FAISS index (the module docstring)."""

    def __init__(self, attributes: VectorStoreAttributes) -> None:
        self.collection = attributes.collection
        self.distance: str = attributes.distance
        self.dimension: int | None = None
        self._index: Any = None
        self._chunks: dict[str, _Stored] = {}
        self._keys = itertools.count()
        self._lock = threading.Lock()
        if attributes.dimension is not None:
            self.ensure_collection(EnsureCollectionInput(attributes.dimension, attributes.distance))

    # -- the index ---------------------------------------------------------------------

    def _create(self, dimension: int) -> None:
        import faiss

        flat = (
            faiss.IndexFlatL2(dimension) if self.distance == "l2" else faiss.IndexFlatIP(dimension)
        )
        self._index = faiss.IndexIDMap2(flat)
        self.dimension = dimension

    def _matrix(self, vectors: list[list[float]]) -> Any:
        import numpy as np

        matrix = np.asarray(vectors, dtype="float32").reshape(len(vectors), -1)
        if self.distance == "cosine":
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = matrix / np.where(norms == 0, 1, norms)  # a zero vector stays zero
        return np.ascontiguousarray(matrix)

    def _remove(self, ids: list[str]) -> int:
        import numpy as np

        keys = [self._chunks.pop(i).key for i in dict.fromkeys(ids) if i in self._chunks]
        if keys:
            self._index.remove_ids(np.asarray(keys, dtype="int64"))
        return len(keys)

    def _insert(self, chunks: list[Chunk]) -> None:
        import numpy as np

        if not chunks:
            return
        self._remove([c.id for c in chunks])  # an existing id is replaced
        keys = [next(self._keys) for _ in chunks]
        self._index.add_with_ids(
            self._matrix([c.vector for c in chunks]), np.asarray(keys, dtype="int64")
        )
        for key, chunk in zip(keys, chunks, strict=True):
            self._chunks[chunk.id] = _Stored(key, chunk)

    def _ready_for(self, chunks: list[Chunk]) -> None:
        dimension = check_dimension(chunks, self.dimension, self.collection)
        if self.dimension is None and dimension is not None:
            self._create(dimension)

    def _distance(self, raw: float) -> float:
        if self.distance == "cosine":
            return 1.0 - raw
        if self.distance == "dot":
            return -raw
        return float(max(raw, 0.0) ** 0.5)

    # -- methods -----------------------------------------------------------------------

    def info(self, inputs: InfoInput | None = None) -> dict[str, Any]:
        with self._lock:
            count = len(self._chunks)
        return {
            "collection": self.collection,
            "exists": self.dimension is not None,
            "dimension": self.dimension,
            "distance": self.distance,
            "count": count,
            "keyword_search": False,
        }

    def ensure_collection(self, inputs: EnsureCollectionInput) -> dict[str, Any]:
        with self._lock:
            if self.dimension is None:
                self.distance = inputs.distance
                self._create(inputs.dimension)
            else:
                check_collection(
                    self.collection,
                    (self.dimension, self.distance),
                    (inputs.dimension, inputs.distance),
                )
        return self.info()

    def upsert(self, inputs: UpsertInput) -> dict[str, Any]:
        with self._lock:
            self._ready_for(inputs.chunks)
            self._insert(inputs.chunks)
        return {"upserted": len(inputs.chunks)}

    def replace_documents(self, inputs: ReplaceDocumentsInput) -> dict[str, Any]:
        # Under one lock, checked before any change: readers see the old version or the new.
        with self._lock:
            self._ready_for(inputs.chunks)
            documents = set(inputs.all_document_ids())
            old = [i for i, s in self._chunks.items() if s.chunk.document_id in documents]
            deleted = self._remove(old) if self.dimension is not None else 0
            self._insert(inputs.chunks)
        return {"deleted": deleted, "inserted": len(inputs.chunks)}

    def delete(self, inputs: DeleteInput) -> dict[str, Any]:
        with self._lock:
            if inputs.ids is not None:
                ids = list(inputs.ids)
            elif inputs.document_ids is not None:
                wanted = set(inputs.document_ids)
                ids = [i for i, s in self._chunks.items() if s.chunk.document_id in wanted]
            else:
                where = inputs.where
                ids = [i for i, s in self._chunks.items() if matches(where, s.chunk.metadata)]
            return {"deleted": self._remove(ids) if self.dimension is not None else 0}

    def count(self, inputs: CountInput) -> dict[str, Any]:
        where = inputs.where
        with self._lock:
            return {"count": sum(matches(where, s.chunk.metadata) for s in self._chunks.values())}

    def search(self, inputs: SearchInput) -> dict[str, Any]:
        import faiss
        import numpy as np

        with self._lock:
            if self.dimension is None:
                return {"matches": []}
            check_query_dimension(inputs.vector, self.dimension, self.collection)
            where = inputs.where
            passing = [s for s in self._chunks.values() if matches(where, s.chunk.metadata)]
            if not passing:
                return {"matches": []}
            # Ask for every chunk tied at the cut: FAISS breaks ties its own way, the
            # contract by insertion order.
            k = len(passing)
            params = None
            if where is not None:
                selector = faiss.IDSelectorBatch(
                    np.asarray([s.key for s in passing], dtype="int64")
                )
                params = faiss.SearchParameters()
                params.sel = selector
            raw, keys = self._index.search(self._matrix([inputs.vector]), k, params=params)
            by_key = {s.key: s.chunk for s in passing}
            found = [
                (self._distance(float(d)), int(key))
                for d, key in zip(raw[0], keys[0], strict=True)
                if int(key) in by_key
            ]
        found.sort()
        metric = self.distance
        return {
            "matches": [
                match(
                    c.id,
                    c.document_id,
                    c.text,
                    c.metadata,
                    c.content_hash,
                    distance=d,
                    score=score(metric, d),
                )
                for d, c in ((d, by_key[key]) for d, key in found[: inputs.top_k])
            ]
        }

    def keyword_search(self, inputs: KeywordSearchInput) -> dict[str, Any]:
        raise no_keyword_search(COMPONENT_TYPE)

    def get(self, inputs: GetInput) -> dict[str, Any]:
        with self._lock:
            found = [self._chunks[i].chunk for i in dict.fromkeys(inputs.ids) if i in self._chunks]
        return {"chunks": [c.to_dict(include_vector=inputs.include_vectors) for c in found]}

    def documents(self, inputs: DocumentsInput) -> dict[str, Any]:
        wanted = dict.fromkeys(inputs.document_ids)
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            for stored in self._chunks.values():
                document = stored.chunk.document_id
                if document not in wanted:
                    continue
                entry = found.setdefault(
                    document, {"document_id": document, "chunks": 0, "content_hashes": set()}
                )
                entry["chunks"] += 1
                if stored.chunk.content_hash is not None:
                    entry["content_hashes"].add(stored.chunk.content_hash)
        for entry in found.values():
            entry["content_hashes"] = sorted(entry["content_hashes"])
        return {"documents": [found[d] for d in wanted if d in found]}


def create(attributes: VectorStoreAttributes) -> FaissStore:
    return FaissStore(attributes)
