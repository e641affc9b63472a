"""Ailoy's `VectorStore`, both of its APIs on one object: a vector-store component of
ferrule's contract (`ferrule_kit.embeddings.vectors`) defined on a runtime.

Ailoy 0.2: a store of vectors you embed yourself (with `ferrule.EmbeddingModel`)::

    vs = VectorStore.new_faiss(1024)                     # or new_chroma(url, collection)
    id0 = vs.add_vector(VectorStoreAddInput(embedding=emb.infer_sync(doc), document=doc))
    vs.retrieve(emb.infer_sync("query"), top_k=2)        # nearest first, by distance
    vs.get_by_id(id0), vs.count(), vs.remove_vector(id0), vs.clear()

Ailoy 0.1: an embedding model and a store defined together, storing and retrieving text::

    with VectorStore(rt, "BAAI/bge-m3", "faiss") as vs:
        vs.insert("BGE M3 is an embedding model ...", metadata={"value": "BGE-M3"})
        vs.retrieve("What is BGE M3?", top_k=1)[0].metadata  # {"value": "BGE-M3"}

``"faiss"`` is ferrule-faiss's ``faiss_store``, ``"chromadb"`` ferrule-chroma's
``chroma_vector_store`` (a real Chroma server); any other vector-store component type is
taken by its ferrule name. Each Ailoy document is one chunk: its text, metadata and
vector. Every method has an async twin (``aadd_vector``, ``aretrieve``, ...). For
chunking, hybrid search and agents that search by themselves, use
`ferrule.knowledge.Knowledge` (Ailoy's ``Knowledge.new_vector_store(vs, emb)`` is one).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.embeddings.vectors import VectorStoreUnavailableError

from ._bridge import Bridge, blocking, on_bridge_loop
from .agent.langmodel import component_name
from .embedding_model import EmbeddingModel
from .models import check_device_id
from .shared_runtime import default_runtime

__all__ = [
    "VectorStore",
    "VectorStoreAddInput",
    "VectorStoreGetResult",
    "VectorStoreInsertItem",
    "VectorStoreRetrieveItem",
    "VectorStoreRetrieveResult",
]

#: Ailoy's vector-store names -> ferrule component types.
STORE_TYPES = {"faiss": "faiss_store", "chromadb": "chroma_vector_store"}
#: Where Ailoy 0.2's ``new_chroma`` keeps vectors when given no collection.
DEFAULT_CHROMA_COLLECTION = "default_collection"
#: Everything passes this filter: ``clear`` deletes by it.
_EVERYTHING: dict[str, Any] = {"$and": []}


def _metadata(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidInputError("must be a dict or None", field="metadata")
    return dict(value)


@attrs.define
class VectorStoreAddInput:
    """A vector to add (Ailoy 0.2): its ``embedding``, the ``document`` it embeds and
    optional ``metadata``."""

    embedding: list[float]
    document: str
    metadata: dict[str, Any] | None = attrs.field(default=None, converter=_metadata)


@attrs.define
class VectorStoreGetResult:
    """A stored vector, by id (Ailoy 0.2)."""

    id: str
    document: str
    metadata: dict[str, Any] | None
    embedding: list[float]


@attrs.define
class VectorStoreRetrieveResult:
    """One retrieved document: its id, text and metadata, its ``distance`` to the query
    (lower is nearer: the store's, ``1 - cos`` for cosine stores; Ailoy 0.2's field) and
    its ``similarity`` (higher is nearer: the store's score, ``cos`` for cosine stores;
    Ailoy 0.1's)."""

    id: str
    document: str
    metadata: dict[str, Any] | None
    distance: float
    similarity: float


#: Ailoy 0.1's name of a retrieved document.
VectorStoreRetrieveItem = VectorStoreRetrieveResult


@attrs.define
class VectorStoreInsertItem:
    """A document to insert (Ailoy 0.1): its text and optional metadata."""

    document: str
    metadata: dict[str, Any] | None = attrs.field(default=None, converter=_metadata)


def _retrieved(match: dict[str, Any]) -> VectorStoreRetrieveResult:
    return VectorStoreRetrieveResult(
        match["id"], match["text"], match["metadata"] or None, match["distance"], match["score"]
    )


class VectorStore:
    """A vector-store component on a runtime, with an embedding model when made the Ailoy
    0.1 way (``VectorStore(runtime, embedding_model_name, vector_store_name, ...)``) and
    without one when made the 0.2 way (`new_faiss`, `new_chroma`). `delete` (or leaving
    ``with``) deletes the components it defined."""

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
        self.runtime = runtime
        self.name: str | None = None
        self.embedding_model: EmbeddingModel | None = None
        self._store_type = ""
        self._store_attributes: dict[str, Any] = {}
        self.define(
            embedding_model_name,
            vector_store_name,
            url=url,
            collection=collection,
            embedding_model_attrs=embedding_model_attrs,
            vector_store_attrs=vector_store_attrs,
        )

    def __repr__(self) -> str:
        model = self.embedding_model.model if self.embedding_model is not None else None
        return f"VectorStore(store={self._store_type!r}, name={self.name!r}, embedding_model={model!r})"

    @property
    def sync_bridge(self) -> Bridge:
        bridge: Bridge = self.runtime.sync_bridge
        return bridge

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.delete()

    # -- making one ------------------------------------------------------------------------

    @classmethod
    async def anew(
        cls, store_type: str, attributes: dict[str, Any], *, runtime: Any = None
    ) -> VectorStore:
        """A store of component type ``store_type`` (an Ailoy name or a ferrule one), defined
        with ``attributes`` on ``runtime`` (default: the process's shared one)."""
        runtime = runtime if runtime is not None else default_runtime()
        store = cls.__new__(cls)
        store.runtime, store.embedding_model = runtime, None
        store._store_type = STORE_TYPES.get(store_type, store_type)
        store._store_attributes = dict(attributes)
        store.name = None
        await store.sync_bridge.arun(store._define_store())
        return store

    @classmethod
    def new_faiss(cls, dim: int, *, runtime: Any = None) -> VectorStore:
        """An in-memory FAISS store of ``dim`` dimensions (cosine; ferrule-faiss)."""
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            raise InvalidInputError("must be a positive integer", field="dim")
        runtime = runtime if runtime is not None else default_runtime()
        bridge: Bridge = runtime.sync_bridge
        return bridge.run(cls.anew("faiss", {"dimension": dim}, runtime=runtime))

    @classmethod
    def new_chroma(
        cls, url: str, collection_name: str | None = None, *, runtime: Any = None
    ) -> VectorStore:
        """A collection (default ``default_collection``, made if missing, with L2 distances)
        of the Chroma server at ``url`` (ferrule-chroma). As in Ailoy, a server that does not answer
        raises RuntimeError (its cause: the store's `VectorStoreUnavailableError`)."""
        runtime = runtime if runtime is not None else default_runtime()
        # l2: Chroma's own default space, as Ailoy's store has it (in a cosine space Chroma
        # normalises the stored vectors, so get_by_id would not give back the embedding)
        attributes = {
            "url": url,
            "collection": collection_name or DEFAULT_CHROMA_COLLECTION,
            "distance": "l2",
        }
        bridge: Bridge = runtime.sync_bridge
        store = bridge.run(cls.anew("chromadb", attributes, runtime=runtime))
        try:
            store.count()
        except VectorStoreUnavailableError as error:
            store.delete()
            raise RuntimeError(f"no Chroma server answers at {url}: {error}") from error
        return store

    def define(
        self,
        embedding_model_name: str,
        vector_store_name: str,
        url: str | None = None,
        collection: str | None = None,
        embedding_model_attrs: dict[str, Any] | None = None,
        vector_store_attrs: dict[str, Any] | None = None,
    ) -> None:
        """Define the embedding model and the store on the runtime, the store as wide as the
        model's vectors (Ailoy 0.1; nothing if already defined). ``url`` and
        ``collection`` are Chroma's."""
        if self.name is not None:
            return
        model_attributes = dict(embedding_model_attrs or {})
        if "device" in model_attributes:  # Ailoy 0.1's device attribute: only the CPU's here
            check_device_id(model_attributes.pop("device"), "embedding_model_attrs.device")
        self.embedding_model = self.sync_bridge.run(
            EmbeddingModel.define(self.runtime, embedding_model_name, model_attributes)
        )
        self._store_type = STORE_TYPES.get(vector_store_name, vector_store_name)
        attributes: dict[str, Any] = {"dimension": self.embedding_model.dimension}
        if vector_store_name == "chromadb":
            attributes.update(
                {k: v for k, v in (("url", url), ("collection", collection)) if v is not None}
            )
        attributes.update(vector_store_attrs or {})
        self._store_attributes = attributes
        try:
            self.sync_bridge.run(self._define_store())
        except BaseException:
            self.embedding_model.delete()
            self.embedding_model = None
            raise

    async def _define_store(self) -> None:
        name = component_name("vector-store")
        await self.runtime.adefine(self._store_type, name, self._store_attributes)
        self.name = name

    @on_bridge_loop
    async def adelete(self) -> None:
        """Delete the components this store defined (nothing if already deleted). A Chroma
        collection keeps its data; a FAISS store's is gone."""
        name, model = self.name, self.embedding_model
        self.name, self.embedding_model = None, None
        if name is not None:
            await self.runtime.adelete(name)
        if model is not None:
            await model.adelete()

    delete = blocking(adelete)

    def _defined(self) -> str:
        if self.name is None:
            raise InvalidInputError("this VectorStore was deleted", field="vector_store")
        return self.name

    async def _call(self, method: str, inputs: dict[str, Any]) -> Any:
        return await self.runtime.acall_method(self._defined(), method, inputs)

    # -- Ailoy 0.2: vectors ------------------------------------------------------------------

    @on_bridge_loop
    async def aadd_vectors(self, inputs: Sequence[VectorStoreAddInput]) -> list[str]:
        """Store each input as one chunk; their new ids, in order."""
        chunks: list[dict[str, Any]] = []
        for i, item in enumerate(inputs):
            if not isinstance(item, VectorStoreAddInput):
                raise InvalidInputError(
                    f"expected a VectorStoreAddInput, got {type(item).__name__}",
                    field=f"inputs[{i}]",
                )
            if not isinstance(item.document, str):
                raise InvalidInputError("must be a string", field=f"inputs[{i}].document")
            chunks.append(
                {
                    "id": uuid.uuid4().hex,
                    "vector": item.embedding,
                    "text": item.document,
                    "metadata": item.metadata or {},
                }
            )
        if chunks:
            await self._call("upsert", {"chunks": chunks})
        return [c["id"] for c in chunks]

    add_vectors = blocking(aadd_vectors)

    @on_bridge_loop
    async def aadd_vector(self, input: VectorStoreAddInput) -> str:
        return (await self.aadd_vectors([input]))[0]

    add_vector = blocking(aadd_vector)

    @on_bridge_loop
    async def aget_by_ids(self, ids: Sequence[str]) -> list[VectorStoreGetResult]:
        """The stored vectors with these ids, in order (absent ids are left out)."""
        out = await self._call("get", {"ids": list(ids), "include_vectors": True})
        return [
            VectorStoreGetResult(c["id"], c["text"], c["metadata"] or None, c["vector"])
            for c in out["chunks"]
        ]

    get_by_ids = blocking(aget_by_ids)

    @on_bridge_loop
    async def aget_by_id(self, id: str) -> VectorStoreGetResult | None:
        found = await self.aget_by_ids([id])
        return found[0] if found else None

    get_by_id = blocking(aget_by_id)

    @on_bridge_loop
    async def abatch_retrieve(
        self, query_embeddings: Sequence[list[float]], top_k: int
    ) -> list[list[VectorStoreRetrieveResult]]:
        """For each query vector, the ``top_k`` nearest stored vectors, nearest first."""
        return [
            [
                _retrieved(m)
                for m in (await self._call("search", {"vector": query, "top_k": top_k}))["matches"]
            ]
            for query in query_embeddings
        ]

    batch_retrieve = blocking(abatch_retrieve)

    @on_bridge_loop
    async def aremove_vectors(self, ids: Sequence[str]) -> None:
        await self._call("delete", {"ids": list(ids)})

    remove_vectors = blocking(aremove_vectors)

    @on_bridge_loop
    async def aremove_vector(self, id: str) -> None:
        await self.aremove_vectors([id])

    remove_vector = blocking(aremove_vector)
    #: Ailoy 0.1's name (its stores' ``remove`` method).
    remove = remove_vector

    @on_bridge_loop
    async def aclear(self) -> None:
        """Remove every stored vector (Ailoy 0.1's JavaScript ``clear`` too)."""
        await self._call("delete", {"filter": _EVERYTHING})

    clear = blocking(aclear)
    #: Ailoy 0.1's (Python) name of `clear`.
    clean = clear

    @on_bridge_loop
    async def acount(self) -> int:
        count: int = (await self._call("count", {}))["count"]
        return count

    count = blocking(acount)

    # -- both: retrieve ----------------------------------------------------------------------

    @on_bridge_loop
    async def aretrieve(
        self,
        query: str | list[float] | None = None,
        top_k: int = 5,
        *,
        query_embedding: list[float] | None = None,
    ) -> list[VectorStoreRetrieveResult]:
        """The ``top_k`` stored documents nearest to ``query``, nearest first: a query
        vector (Ailoy 0.2's ``retrieve(query_embedding, top_k)``, by position or as
        ``query_embedding=``), or a text that this store's embedding model embeds first
        (Ailoy 0.1's ``retrieve(query, top_k=5)``)."""
        if query_embedding is not None:
            if query is not None:
                raise InvalidInputError(
                    "give query or query_embedding, not both", field="query_embedding"
                )
            query = query_embedding
        if query is None:
            raise InvalidInputError("a query (text or vector) is required", field="query")
        if isinstance(query, str):
            if not query:
                raise InvalidInputError("must be a non-empty string", field="query")
            vector = await self._embedder().aembed([query], "query")
            query = vector[0]
        return (await self.abatch_retrieve([query], top_k))[0]

    retrieve = blocking(aretrieve)

    # -- Ailoy 0.1: documents --------------------------------------------------------------

    def _embedder(self) -> EmbeddingModel:
        self._defined()
        if self.embedding_model is None:
            raise InvalidInputError(
                "this VectorStore has no embedding model (made by new_faiss / new_chroma): "
                "give vectors, or make it with VectorStore(runtime, embedding_model_name, "
                "vector_store_name)",
                field="embedding_model",
            )
        return self.embedding_model

    @on_bridge_loop
    async def aembedding(self, text: str) -> list[float]:
        """The vector of ``text`` by this store's embedding model."""
        return (await self._embedder().aembed([text]))[0]

    embedding = blocking(aembedding)

    @on_bridge_loop
    async def ainsert(self, document: str, metadata: dict[str, Any] | None = None) -> str:
        """Embed and store one document; its id."""
        if not isinstance(document, str) or not document:
            raise InvalidInputError("must be a non-empty string", field="document")
        vector = await self.aembedding(document)
        return await self.aadd_vector(VectorStoreAddInput(vector, document, metadata))

    insert = blocking(ainsert)
