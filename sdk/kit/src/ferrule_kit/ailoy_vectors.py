"""Ailoy 0.1's vector-store methods, over the vector-store contract (`ferrule_kit.vectors`).

Ailoy 0.1 drives its stores (``faiss_vector_store``, ``chromadb_vector_store``) with six
methods of its own. A store that mixes `AiloyVectorStoreMethods` into its class and is
described with ``vector_store_type(..., ailoy_v0_1=True)`` answers them too, each one a
call of the contract's methods on the same store: one implementation, two protocols::

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

Shapes, as Ailoy's: ``insert_many`` takes a bare list (`MethodSpec.array_input`);
``get_by_id`` answers null for an unknown id and ``remove`` / ``clear`` answer ``true``
(`MethodSpec.value_output`). Each document is one chunk: ``document`` its text,
``embedding`` its vector, ``metadata`` its metadata. ``similarity`` is the contract's
``score`` (``cos`` in a cosine store, ferrule's default: from 0 to 1 for Ailoy's
non-negative embeddings). Metadata ``null`` is kept as an empty object, and an empty
object reads back as ``null``.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import attrs
from ferrule_kernel import InvalidInputError, in_range

from .vectors import (
    MAX_TOP_K,
    Chunk,
    DeleteInput,
    DimensionMismatchError,
    GetInput,
    SearchInput,
    UpsertInput,
)

__all__ = [
    "AiloyVectorStoreMethods",
    "ClearInput",
    "IdInput",
    "InsertInput",
    "InsertManyInput",
    "RetrieveInput",
]

#: A filter every chunk passes: ``clear`` deletes by it (an empty filter is refused).
_EVERY_CHUNK: dict[str, Any] = {"$and": []}


@attrs.frozen
class InsertInput:
    """One document: its vector, its text and optional metadata (an object or null)."""

    embedding: list[float]
    document: str
    metadata: dict[str, Any] | None = None


@attrs.frozen
class InsertManyInput:
    """``insert_many``'s documents: sent as a bare JSON array, Ailoy's way."""

    items: list[InsertInput]


def _not_empty(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value:
        raise InvalidInputError("must not be empty", field=attribute.name)


@attrs.frozen
class IdInput:
    id: str = attrs.field(validator=_not_empty)


@attrs.frozen
class RetrieveInput:
    query_embedding: list[float]
    top_k: int = attrs.field(validator=in_range(1, MAX_TOP_K))


@attrs.frozen
class ClearInput:
    """``clear`` takes nothing (Ailoy sends null)."""


def _chunk(item: InsertInput) -> Chunk:
    return Chunk(
        id=uuid.uuid4().hex, vector=item.embedding, text=item.document, metadata=item.metadata or {}
    )


def _as_items(error: DimensionMismatchError, one: bool) -> DimensionMismatchError:
    """The contract's error, its paths in Ailoy's input (``$.items[i].embedding``, as the
    kernel names a bare array's items; ``$.embedding`` for ``insert``)."""
    errors = []
    for entry in error.errors:
        path = entry["path"]
        if path.startswith("$.chunks[") and path.endswith("].vector"):
            index = path[len("$.chunks[") : -len("].vector")]
            path = "$.embedding" if one else f"$.items[{index}].embedding"
        errors.append({**entry, "path": path})
    return DimensionMismatchError(error.message, **{**error.details, "errors": errors})


def _metadata(stored: dict[str, Any] | None) -> dict[str, Any] | None:
    return stored or None


class AiloyVectorStoreMethods:
    """Ailoy 0.1's ``insert``, ``insert_many``, ``get_by_id``, ``retrieve``, ``remove`` and
    ``clear``, for a blocking store class that has the contract's methods (its ``upsert``,
    ``get``, ``search`` and ``delete`` are what these call)."""

    if TYPE_CHECKING:

        def upsert(self, inputs: UpsertInput) -> dict[str, Any]: ...
        def get(self, inputs: GetInput) -> dict[str, Any]: ...
        def search(self, inputs: SearchInput) -> dict[str, Any]: ...
        def delete(self, inputs: DeleteInput) -> dict[str, Any]: ...

    def _add(self, items: list[InsertInput], one: bool) -> list[str]:
        chunks = [_chunk(item) for item in items]
        if chunks:
            try:
                self.upsert(UpsertInput(chunks))
            except DimensionMismatchError as error:
                raise _as_items(error, one) from None
        return [chunk.id for chunk in chunks]

    def insert(self, inputs: InsertInput) -> dict[str, Any]:
        return {"id": self._add([inputs], one=True)[0]}

    def insert_many(self, inputs: InsertManyInput) -> dict[str, Any]:
        return {"ids": self._add(inputs.items, one=False)}

    def get_by_id(self, inputs: IdInput) -> dict[str, Any] | None:
        found = self.get(GetInput([inputs.id], include_vectors=True))["chunks"]
        if not found:
            return None
        chunk = found[0]
        return {
            "id": chunk["id"],
            "document": chunk["text"],
            "metadata": _metadata(chunk["metadata"]),
            "embedding": chunk["vector"],
        }

    def retrieve(self, inputs: RetrieveInput) -> dict[str, Any]:
        search = SearchInput(inputs.query_embedding, inputs.top_k)
        try:
            matches = self.search(search)["matches"]
        except DimensionMismatchError as error:
            path = {"path": "$.query_embedding", "message": error.message}
            raise DimensionMismatchError(
                error.message, **{**error.details, "errors": [path]}
            ) from None
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

    def remove(self, inputs: IdInput) -> bool:
        self.delete(DeleteInput(ids=[inputs.id]))
        return True

    def clear(self, inputs: ClearInput) -> bool:
        self.delete(DeleteInput(filter=_EVERY_CHUNK))
        return True
