"""Ailoy 0.1's `VectorStore`: an embedding model and a vector store defined together on a
runtime, storing whole documents and retrieving them by a query's meaning.

    with VectorStore(rt, "BAAI/bge-m3", "faiss") as vs:
        vs.insert("BGE M3 is an embedding model ...", metadata={"value": "BGE-M3"})
        vs.retrieve("What is BGE M3?", top_k=1)[0].metadata  # {"value": "BGE-M3"}

It is a thin face over ferrule's own components: the embedder the installed plugins name
for ``embedding_model_name`` (``ferrule_resolve_embedder``, after ``$FERRULE_MODEL_ALIASES``:
``BAAI/bge-m3=all-MiniLM-L6-v2`` runs Ailoy code on the offline MiniLM) and a component of
ferrule's vector-store contract (``"faiss"``: ferrule-faiss; ``"chromadb"``: ferrule-chroma;
or any vector-store component type by its ferrule name). For chunking, hybrid search and
agents that search by themselves, use `ferrule.knowledge.Knowledge`.
"""

from __future__ import annotations

import uuid
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .agent.langmodel import component_name, routing_kernel
from .models import route_embedder

__all__ = ["VectorStore", "VectorStoreInsertItem", "VectorStoreRetrieveItem"]

#: Ailoy's vector-store names -> ferrule component types.
STORE_TYPES = {"faiss": "faiss_vector_store", "chromadb": "chroma_vector_store"}


@attrs.frozen
class VectorStoreInsertItem:
    document: str
    metadata: dict[str, Any] | None = None


@attrs.frozen
class VectorStoreRetrieveItem:
    """One retrieved document: its id, text, metadata and similarity (higher is nearer:
    the store's ``score``, the cosine similarity for cosine stores)."""

    id: str
    document: str
    metadata: dict[str, Any] | None
    similarity: float


class VectorStore:
    """Documents embedded by one model and kept in one vector store on ``runtime`` (a
    `ferrule.Runtime`); both components are deleted by `delete` (or leaving ``with``)."""

    def __init__(
        self,
        runtime: Any,
        embedding_model_name: str,
        vector_store_name: str,
        url: str | None = None,
        collection: str | None = None,
        embedding_model_attrs: dict[str, Any] | None = None,
        vector_store_attrs: dict[str, Any] | None = None,
    ) -> None:
        self._runtime = runtime
        self._embedder: str | None = None
        self._store: str | None = None
        self.define(
            embedding_model_name,
            vector_store_name,
            url=url,
            collection=collection,
            embedding_model_attrs=embedding_model_attrs,
            vector_store_attrs=vector_store_attrs,
        )

    def __repr__(self) -> str:
        return f"VectorStore(embedder={self._embedder!r}, store={self._store!r})"

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.delete()

    def define(
        self,
        embedding_model_name: str,
        vector_store_name: str,
        url: str | None = None,
        collection: str | None = None,
        embedding_model_attrs: dict[str, Any] | None = None,
        vector_store_attrs: dict[str, Any] | None = None,
    ) -> None:
        """Define the embedder and the store on the runtime (nothing if already defined)."""
        if self._store is not None:
            return
        kernel = routing_kernel(self._runtime)
        route = route_embedder(kernel, embedding_model_name)
        embedder = component_name("embedder")
        self._runtime.define(
            route.component_type, embedder, {**route.attributes, **(embedding_model_attrs or {})}
        )
        try:
            info = self._runtime.call_method(embedder, "info", {})
            store_type = STORE_TYPES.get(vector_store_name, vector_store_name)
            attributes: dict[str, Any] = {
                "dimension": info["dimension"],
                "distance": info.get("distance", "cosine"),
            }
            if vector_store_name == "chromadb":
                if url is not None:
                    attributes["url"] = url
                if collection is not None:
                    attributes["collection"] = collection
            attributes.update(vector_store_attrs or {})
            store = component_name("vector-store")
            self._runtime.define(store_type, store, attributes)
        except BaseException:
            self._runtime.delete(embedder)
            raise
        self._embedder, self._store, self._store_type = embedder, store, store_type
        self._store_attributes = attributes

    def delete(self) -> None:
        """Delete both components from the runtime (nothing if already deleted)."""
        embedder, store = self._embedder, self._store
        self._embedder = self._store = None
        for name in (store, embedder):
            if name is not None:
                self._runtime.delete(name)

    def _defined(self) -> tuple[str, str]:
        if self._embedder is None or self._store is None:
            raise InvalidInputError("this VectorStore was deleted", field="vector_store")
        return self._embedder, self._store

    def _embed(self, text: str, input_type: str) -> list[float]:
        embedder, _ = self._defined()
        out = self._runtime.call_method(
            embedder, "embed", {"texts": [text], "input_type": input_type}
        )
        vector: list[float] = out["vectors"][0]
        return vector

    def insert(self, document: str, metadata: dict[str, Any] | None = None) -> str:
        """Embed and store one document; its id."""
        if not isinstance(document, str) or not document:
            raise InvalidInputError("must be a non-empty string", field="document")
        _, store = self._defined()
        chunk_id = uuid.uuid4().hex
        chunk = {
            "id": chunk_id,
            "vector": self._embed(document, "document"),
            "text": document,
            "metadata": dict(metadata or {}),
        }
        self._runtime.call_method(store, "upsert", {"chunks": [chunk]})
        return chunk_id

    def retrieve(self, query: str, top_k: int = 5) -> list[VectorStoreRetrieveItem]:
        """The ``top_k`` stored documents nearest in meaning to ``query``, nearest first."""
        if not isinstance(query, str) or not query:
            raise InvalidInputError("must be a non-empty string", field="query")
        _, store = self._defined()
        found = self._runtime.call_method(
            store, "search", {"vector": self._embed(query, "query"), "top_k": top_k}
        )["matches"]
        return [
            VectorStoreRetrieveItem(m["id"], m["text"], m["metadata"] or None, m["score"])
            for m in found
        ]

    def get_by_id(self, id: str) -> VectorStoreRetrieveItem | None:
        """The stored document with this id (similarity 1.0), or None."""
        _, store = self._defined()
        chunks = self._runtime.call_method(store, "get", {"ids": [id]})["chunks"]
        if not chunks:
            return None
        return VectorStoreRetrieveItem(chunks[0]["id"], chunks[0]["text"], chunks[0]["metadata"] or None, 1.0)

    def remove(self, id: str) -> None:
        """Remove one document by its id."""
        _, store = self._defined()
        self._runtime.call_method(store, "delete", {"ids": [id]})

    def clear(self) -> None:
        """Remove every document."""
        _, store = self._defined()
        # the store component made anew: the contract deletes by ids, documents or a filter
        self._runtime.delete(store)
        self._store = None
        fresh = component_name("vector-store")
        self._runtime.define(self._store_type, fresh, self._store_attributes)
        self._store = fresh
