"""Agno's ``agno.vectordb.base``: `VectorDb`, a vector database a program uses directly
(``vector_db.insert(content_hash, documents)``, ``vector_db.search("query")``...) and hands
to `Knowledge` (``Knowledge(vector_db=PgVector(...))``).

A `VectorDb` describes a vector-store component (its ``component_type`` and
``attributes``, as `ferrule.knowledge.vectordb` describes one): `Knowledge` defines it on
its runtime; the db's own methods define it once on the process's shared runtime and call
the vector-store contract (`ferrule_kit.embeddings.vectors`), embedding with the db's ``embedder``
(`ferrule.knowledge.embedder`; the offline MiniLM by default) as `Knowledge` does.

- ``insert`` / ``upsert`` embed the documents that have no embedding and store them (ids:
  the document's, else one made from its text and ``content_hash``), each with its
  ``meta_data``, the ``filters`` given, ``name``, ``content_id`` and ``content_hash``.
- ``search`` by ``search_type``: nearest embeddings, the store's full-text search, or both
  fused by reciprocal rank (`hybrid_weight` weighs the vector ranking); ``filters`` are
  Agno's (a dict, or `ferrule.filters` expressions). With ``similarity_threshold`` (0 to 1,
  `ferrule.vectordb.score`) a vector result less similar is left out; a ``reranker`` (any
  object with Agno's ``rerank(query, documents)``) orders the results last.
- ``delete_by_*`` delete by id, name, metadata or content id; ``delete`` / ``drop`` empty
  the collection (the contract keeps collections: ``exists()`` stays true).
- ``update_metadata`` is refused: the contract changes no stored chunk in place; insert
  the content again (``upsert`` replaces by id).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ferrule_kernel import InvalidInputError

from ..knowledge.document.base import Document
from .distance import Distance, store_distance
from .score import normalize_score

__all__ = ["ALL", "NO_METADATA_UPDATE", "VectorDb"]

#: A filter every chunk passes: how `delete` names them all (an empty filter deletes none).
ALL: dict[str, Any] = {"$or": [{"name": {"$exists": True}}, {"name": {"$exists": False}}]}
NO_METADATA_UPDATE = (
    "update_metadata: the vector-store contract changes no stored chunk in place; insert "
    "the content again with its new metadata (upsert replaces chunks by id)"
)
SEARCH_TYPES = ("vector", "keyword", "hybrid")


def _bridge() -> Any:
    from ..shared_runtime import default_runtime

    return default_runtime().sync_bridge


def _chunk_id(content_hash: str, text: str) -> str:
    return hashlib.sha256(f"{content_hash}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()[
        :32
    ]


class VectorDb:
    """A vector database (see the module docstring); a subclass names its store."""

    #: The store's component type (a subclass names it).
    component_type: str = ""
    id: str | None
    name: str | None
    description: str | None
    similarity_threshold: float | None
    embedder: Any
    search_type: Any
    distance: Any
    reranker: Any
    #: The weight of the vector ranking in a hybrid search (the keyword one: the rest).
    hybrid_weight: float = 0.5
    #: The constant of the reciprocal rank fusion of a hybrid search.
    rrf_k: int = 60

    def __init__(
        self,
        *,
        id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        similarity_threshold: float | None = None,
    ) -> None:
        if similarity_threshold is not None and not 0.0 <= similarity_threshold <= 1.0:
            raise InvalidInputError("must be from 0.0 to 1.0", field="similarity_threshold")
        self.id = id
        self.name = name
        self.description = description
        self.similarity_threshold = similarity_threshold
        if not hasattr(self, "embedder"):
            self.embedder = None
        if not hasattr(self, "search_type"):
            self.search_type = "vector"
        if not hasattr(self, "distance"):
            self.distance = Distance.cosine
        if not hasattr(self, "reranker"):
            self.reranker = None
        self._component: str | None = None

    # -- the component ------------------------------------------------------------------

    def attributes(self, runtime: Any) -> dict[str, Any]:
        """What the store is defined with (a subclass names its store)."""
        raise NotImplementedError(f"{type(self).__name__} names no store")

    def _embedder(self) -> Any:
        if self.embedder is None:
            from ..knowledge.embedder import MiniLMEmbedder

            self.embedder = MiniLMEmbedder()
        return self.embedder

    async def _store(self) -> str:
        from ..shared_runtime import default_runtime

        if self._component is None:
            import uuid

            runtime = default_runtime()
            name = f"vectordb-{uuid.uuid4().hex[:12]}"
            await runtime.adefine(self.component_type, name, self.attributes(runtime))
            self._component = name
        return self._component

    async def _call(self, method: str, inputs: dict[str, Any]) -> dict[str, Any]:
        from ..shared_runtime import default_runtime

        out: dict[str, Any] = await default_runtime().acall_method(
            await self._store(), method, inputs
        )
        return out

    def _run(self, coro: Any) -> Any:
        return _bridge().run(coro)

    # -- the collection -----------------------------------------------------------------

    async def async_create(self) -> None:
        """Make the collection (for the embedder's vectors), or check the one there is."""
        from ..knowledge.embeddings import aembedder_info

        info = await aembedder_info(self._embedder())
        await self._call(
            "ensure_collection",
            {"dimension": info["dimension"], "distance": store_distance(self.distance)},
        )

    def create(self) -> None:
        """`async_create`, waited for."""
        self._run(self.async_create())

    async def async_exists(self) -> bool:
        """Whether the collection exists."""
        return bool((await self._call("info", {}))["exists"])

    def exists(self) -> bool:
        """`async_exists`, waited for."""
        return bool(self._run(self.async_exists()))

    def optimize(self) -> None:
        """Make sure the collection and its indexes exist (the store builds its own)."""
        self.create()

    def get_count(self) -> int:
        """How many chunks the collection holds."""
        return int(self._run(self._call("count", {}))["count"])

    def get_supported_search_types(self) -> list[str]:
        return list(SEARCH_TYPES)

    def upsert_available(self) -> bool:
        return True

    # -- writing --------------------------------------------------------------------------

    async def _chunks(
        self, content_hash: str, documents: list[Any], filters: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        from ..knowledge.embeddings import aembed

        missing = [d for d in documents if d.embedding is None]
        if missing:
            vectors, usage = await aembed(self._embedder(), [d.content for d in missing])
            for document, vector in zip(missing, vectors, strict=True):
                document.embedding, document.usage = list(vector), usage
        chunks = []
        for document in documents:
            metadata = {
                **(document.meta_data or {}),
                **(filters or {}),
                "content_hash": content_hash,
            }
            if document.name is not None:
                metadata["name"] = document.name
            if document.content_id is not None:
                metadata["content_id"] = document.content_id
            chunks.append(
                {
                    "id": document.id or _chunk_id(content_hash, document.content),
                    "vector": document.embedding,
                    "text": document.content,
                    "document_id": document.content_id,
                    "content_hash": content_hash,
                    "metadata": metadata,
                }
            )
        return chunks

    async def async_upsert(
        self, content_hash: str, documents: list[Any], filters: dict[str, Any] | None = None
    ) -> None:
        """Store the documents, replacing chunks of the same ids (see the module docstring)."""
        if not documents:
            return
        await self.async_create()
        await self._call("upsert", {"chunks": await self._chunks(content_hash, documents, filters)})

    async def async_insert(
        self, content_hash: str, documents: list[Any], filters: dict[str, Any] | None = None
    ) -> None:
        """Store the documents (`async_upsert`)."""
        await self.async_upsert(content_hash, documents, filters)

    def insert(
        self, content_hash: str, documents: list[Any], filters: dict[str, Any] | None = None
    ) -> None:
        """`async_insert`, waited for."""
        self._run(self.async_insert(content_hash, documents, filters))

    def upsert(
        self, content_hash: str, documents: list[Any], filters: dict[str, Any] | None = None
    ) -> None:
        """`async_upsert`, waited for."""
        self._run(self.async_upsert(content_hash, documents, filters))

    # -- searching ----------------------------------------------------------------------

    def _documents(self, matches: list[dict[str, Any]]) -> list[Document]:
        return [
            Document(
                content=m["text"],
                id=m["id"],
                name=m["metadata"].get("name"),
                meta_data=m["metadata"],
                content_id=m.get("document_id") or m["metadata"].get("content_id"),
                score=m["score"],
            )
            for m in matches
        ]

    async def _vector(self, query: str, limit: int, where: Any) -> list[dict[str, Any]]:
        from ..knowledge.embeddings import aembed

        (vector,), _ = await aembed(self._embedder(), [query], "query")
        found = (await self._call("search", {"vector": vector, "top_k": limit, "filter": where}))[
            "matches"
        ]
        if self.similarity_threshold is not None:
            metric = Distance(self.distance)
            found = [
                m
                for m in found
                if normalize_score(m["distance"], metric) >= self.similarity_threshold
            ]
        return list(found)

    async def _keyword(self, query: str, limit: int, where: Any) -> list[dict[str, Any]]:
        out = await self._call("keyword_search", {"query": query, "top_k": limit, "filter": where})
        return list(out["matches"])

    def _fuse(
        self, by_vector: list[dict[str, Any]], by_keyword: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        scores: dict[str, float] = {}
        first: dict[str, dict[str, Any]] = {}
        for weight, ranking in (
            (self.hybrid_weight, by_vector),
            (1 - self.hybrid_weight, by_keyword),
        ):
            for rank, match in enumerate(ranking, 1):
                scores[match["id"]] = scores.get(match["id"], 0.0) + weight / (self.rrf_k + rank)
                first.setdefault(match["id"], match)
        order = sorted(scores, key=lambda ident: -scores[ident])
        return [{**first[i], "score": scores[i]} for i in order]

    async def _search(self, query: str, limit: int, filters: Any, kind: str) -> list[Document]:
        from ..filters import as_store_filter

        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("must be a non-empty string", field="query")
        where = as_store_filter(filters)
        if kind == "vector":
            matches = await self._vector(query, limit, where)
        elif kind == "keyword":
            matches = await self._keyword(query, limit, where)
        else:
            wide = max(limit * 4, 50)
            matches = self._fuse(
                await self._vector(query, wide, where), await self._keyword(query, wide, where)
            )[:limit]
        documents = self._documents(matches)
        if self.reranker is not None and documents:
            documents = list(self.reranker.rerank(query=query, documents=documents))
        return documents

    def _kind(self) -> str:
        kind = getattr(self.search_type, "value", self.search_type)
        if kind not in SEARCH_TYPES:
            raise InvalidInputError(
                f"expected one of {', '.join(SEARCH_TYPES)}, got {kind!r}", field="search_type"
            )
        return str(kind)

    async def async_search(self, query: str, limit: int = 5, filters: Any = None) -> list[Document]:
        """The ``limit`` documents best matching ``query`` (see the module docstring)."""
        return await self._search(query, limit, filters, self._kind())

    def search(self, query: str, limit: int = 5, filters: Any = None) -> list[Document]:
        """`async_search`, waited for."""
        found: list[Document] = self._run(self.async_search(query, limit, filters))
        return found

    # -- what is there ------------------------------------------------------------------

    async def _count(self, where: dict[str, Any]) -> int:
        return int((await self._call("count", {"filter": where}))["count"])

    def name_exists(self, name: str) -> bool:
        """Whether a chunk of a document named ``name`` is stored."""
        return bool(self._run(self._count({"name": name})))

    def async_name_exists(self, name: str) -> bool:
        """`name_exists` (Agno's base makes it a plain method)."""
        return self.name_exists(name)

    def id_exists(self, id: str) -> bool:
        """Whether a chunk of id ``id`` is stored."""
        return bool(self._run(self._call("get", {"ids": [id]}))["chunks"])

    def content_hash_exists(self, content_hash: str) -> bool:
        """Whether chunks stored with ``content_hash`` are there."""
        return bool(self._run(self._count({"content_hash": content_hash})))

    # -- deleting -----------------------------------------------------------------------

    async def _delete(self, **selector: Any) -> int:
        out = await self._call("delete", selector)
        return int(out.get("deleted", 0))

    def delete_by_id(self, id: str) -> bool:
        """Delete the chunk of id ``id``; whether there was one."""
        return bool(self._run(self._delete(ids=[id])))

    def delete_by_name(self, name: str) -> bool:
        """Delete the chunks of the document named ``name``; whether there were any."""
        return bool(self._run(self._delete(filter={"name": name})))

    def delete_by_metadata(self, metadata: dict[str, Any]) -> bool:
        """Delete the chunks whose metadata hold every key and value of ``metadata``."""
        if not metadata:
            raise InvalidInputError("name the metadata to match", field="metadata")
        return bool(self._run(self._delete(filter=dict(metadata))))

    def delete_by_content_id(self, content_id: str) -> bool:
        """Delete the chunks of content ``content_id``; whether there were any."""

        async def both() -> int:
            return await self._delete(document_ids=[content_id]) + await self._delete(
                filter={"content_id": content_id}
            )

        return bool(self._run(both()))

    def delete(self) -> bool:
        """Delete every chunk of the collection."""
        self._run(self._delete(filter=ALL))
        return True

    async def async_drop(self) -> None:
        """Empty the collection (the contract keeps collections)."""
        await self._delete(filter=ALL)

    def drop(self) -> None:
        """`async_drop`, waited for."""
        self._run(self.async_drop())

    def update_metadata(self, content_id: str, metadata: dict[str, Any]) -> None:
        """Refused (see the module docstring)."""
        raise InvalidInputError(NO_METADATA_UPDATE, field="update_metadata")
