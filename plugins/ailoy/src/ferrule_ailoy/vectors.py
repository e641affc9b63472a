"""Ailoy 0.1's vector stores, ``faiss_vector_store`` and ``chromadb_vector_store``, over
ferrule's own stores (``faiss_store``, ``chroma_vector_store``) and their contract
(`ferrule_kit.embeddings.vectors`)::

    rt.define("faiss_vector_store", "vs0", {"dimension": 3})
    rt.call_method("vs0", "insert_many", [
        {"embedding": [0.1, 0.2, 0.3], "document": "doc1", "metadata": {"value": 1}},
        {"embedding": [0.3, 0.2, 0.1], "document": "doc2", "metadata": None}])
      -> {"ids": ["4f1c...", "9a0e..."]}
    rt.call_method("vs0", "get_by_id", {"id": "4f1c..."})
      -> {"id": "4f1c...", "document": "doc1", "metadata": {"value": 1}, "embedding": [...]}
    rt.call_method("vs0", "retrieve", {"query_embedding": [0.1, 0.2, 0.3], "top_k": 2})
      -> {"results": [{"id": "4f1c...", "document": "doc1", "metadata": {"value": 1},
                       "similarity": 1.0}, ...]}                  # nearest first
    rt.call_method("vs0", "remove", {"id": "4f1c..."}) -> True
    rt.call_method("vs0", "clear", None) -> True

Defining one defines the ferrule store it stands for (``vs0/store``, deleted with it); each
method is requests to that store: ``insert`` / ``insert_many`` its ``upsert``, ``get_by_id``
its ``get``, ``retrieve`` its ``search``, ``remove`` and ``clear`` its ``delete``. Each
document is one chunk: ``document`` its text, ``embedding`` its vector, ``metadata`` its
metadata (``null`` kept as an empty object, read back as ``null``). ``similarity`` is the
store's cosine score (ferrule's default; Ailoy's FAISS store gave the raw inner product,
the same order for unit vectors). The shapes are Ailoy's: ``insert_many`` takes a bare JSON
array (its input type is a list), ``get_by_id`` answers ``null`` for an unknown id, and
``remove`` / ``clear`` answer ``true`` (their declared output types).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any, Literal

import attrs
from ferrule_kernel import ComponentRequests, InvalidInputError, in_range
from ferrule_kit.embeddings.vectors import MAX_TOP_K, DimensionMismatchError

from .plugin import VECTOR_STORE_TYPES

__all__ = [
    "ChromaAttributes",
    "ClearInput",
    "Done",
    "FaissAttributes",
    "GetByIdOutput",
    "IdInput",
    "InsertInput",
    "InsertManyInput",
    "RetrieveInput",
    "VectorStore",
    "create_chromadb_vector_store",
    "create_faiss_vector_store",
]

#: A filter every chunk passes: ``clear`` deletes by it (the contract refuses an empty one).
_EVERY_CHUNK: dict[str, Any] = {"$and": []}


def _not_empty(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value:
        raise InvalidInputError("must not be empty", field=attribute.name)


@attrs.frozen
class FaissAttributes:
    """``faiss_vector_store``'s attributes, as Ailoy 0.1 has them."""

    dimension: int = attrs.field(validator=in_range(1, 65536))


@attrs.frozen
class ChromaAttributes:
    """``chromadb_vector_store``'s attributes, as Ailoy 0.1 has them. ``url`` None: the
    host's Chroma (``$FERRULE_CHROMA_URL``, else ``http://localhost:8000``, Ailoy's
    default). A ``url`` from a network client passes ferrule-chroma's address policy."""

    url: str | None = None
    collection: str = "default_collection"


@attrs.frozen
class InsertInput:
    """One document: its vector, its text and optional metadata (an object or null)."""

    embedding: list[float]
    document: str
    metadata: dict[str, Any] | None = None


#: ``insert_many``'s input: a bare JSON array of documents, Ailoy's way.
InsertManyInput = list[InsertInput]


@attrs.frozen
class IdInput:
    id: str = attrs.field(validator=_not_empty)


@attrs.frozen
class RetrieveInput:
    query_embedding: list[float]
    top_k: int = attrs.field(validator=in_range(1, MAX_TOP_K))


@attrs.frozen
class Found:
    """``get_by_id``'s answer when the id is stored."""

    id: str
    document: str
    metadata: dict[str, Any] | None
    embedding: list[float]


@attrs.frozen
class NoInput:
    """``clear`` takes nothing: ``{}``, or ``null`` as Ailoy sends."""


ClearInput = NoInput | None
GetByIdOutput = Found | None
#: What ``remove`` and ``clear`` answer.
Done = Literal[True]


def _metadata(stored: dict[str, Any] | None) -> dict[str, Any] | None:
    return stored or None


#: Where the store's error names a chunk's vector (``$.chunks[i].vector``).
_CHUNK_VECTOR = re.compile(r"^\$\.chunks\[(\d+)\]\.vector")


def _at(error: DimensionMismatchError, rename: Callable[[str], str]) -> DimensionMismatchError:
    """The store's error, its paths renamed to the fields of Ailoy's input."""
    errors = [{**entry, "path": rename(entry["path"])} for entry in error.errors]
    return DimensionMismatchError(error.message, **{**error.details, "errors": errors})


class VectorStore:
    """An Ailoy 0.1 vector store: requests to the ferrule store ``store`` (the module
    docstring)."""

    def __init__(self, requests: ComponentRequests, store: str) -> None:
        self.requests = requests
        self.store = store

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.store!r})"

    async def _call(self, method: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return await self.requests.call_method(self.store, method, inputs)

    async def _add(self, items: list[InsertInput], path: str) -> list[str]:
        """Store ``items``; a wrong dimension is named at ``path`` (``{i}``: the item)."""
        ids = [uuid.uuid4().hex for _ in items]
        chunks = [
            {
                "id": new,
                "vector": item.embedding,
                "text": item.document,
                "metadata": item.metadata or {},
            }
            for new, item in zip(ids, items, strict=True)
        ]
        if chunks:
            try:
                await self._call("upsert", {"chunks": chunks})
            except DimensionMismatchError as error:

                def rename(where: str) -> str:
                    return _CHUNK_VECTOR.sub(lambda m: path.format(i=m[1]), where)

                raise _at(error, rename) from None
        return ids

    async def insert(self, inputs: InsertInput) -> dict[str, Any]:
        (new,) = await self._add([inputs], "$.embedding")
        return {"id": new}

    async def insert_many(self, inputs: list[InsertInput]) -> dict[str, Any]:
        return {"ids": await self._add(inputs, "$[{i}].embedding")}

    async def get_by_id(self, inputs: IdInput) -> dict[str, Any] | None:
        found = (await self._call("get", {"ids": [inputs.id], "include_vectors": True}))["chunks"]
        if not found:
            return None
        chunk = found[0]
        return {
            "id": chunk["id"],
            "document": chunk["text"],
            "metadata": _metadata(chunk["metadata"]),
            "embedding": chunk["vector"],
        }

    async def retrieve(self, inputs: RetrieveInput) -> dict[str, Any]:
        search = {"vector": inputs.query_embedding, "top_k": inputs.top_k}
        try:
            matches = (await self._call("search", search))["matches"]
        except DimensionMismatchError as error:
            raise _at(error, lambda _path: "$.query_embedding") from None
        return {
            "results": [
                {
                    "id": m["id"],
                    "document": m["text"],
                    "metadata": _metadata(m["metadata"]),
                    "similarity": m["score"],
                }
                for m in matches
            ]
        }

    async def remove(self, inputs: IdInput) -> bool:
        await self._call("delete", {"ids": [inputs.id]})
        return True

    async def clear(self, inputs: NoInput | None) -> bool:
        await self._call("delete", {"filter": _EVERY_CHUNK})
        return True


async def create_faiss_vector_store(
    attributes: FaissAttributes, requests: ComponentRequests
) -> VectorStore:
    over = VECTOR_STORE_TYPES["faiss_vector_store"]
    store = await requests.define(over, "store", {"dimension": attributes.dimension})
    return VectorStore(requests, store)


async def create_chromadb_vector_store(
    attributes: ChromaAttributes, requests: ComponentRequests
) -> VectorStore:
    chosen: dict[str, Any] = {"collection": attributes.collection}
    if attributes.url is not None:
        chosen["url"] = attributes.url
    store = await requests.define(VECTOR_STORE_TYPES["chromadb_vector_store"], "store", chosen)
    return VectorStore(requests, store)
