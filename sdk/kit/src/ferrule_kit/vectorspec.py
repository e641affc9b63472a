"""Describing a vector-store component type, for a plugin's hook module.

Like `ferrule_kit.lmspec`, this stays cheap to import: the methods name the contract's
input classes (`ferrule_kit.vectors`) and its converter as strings, imported when a store
is first defined. `VectorStoreAttributes` is the base of every store's ``define``
attributes.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs
from ferrule_kernel import ComponentTypeSpec, InvalidInputError, MethodSpec, Target, in_range

__all__ = [
    "AILOY_V0_1_METHODS",
    "METHODS",
    "Distance",
    "VectorStoreAttributes",
    "vector_store_type",
]

Distance = Literal["cosine", "dot", "l2"]

_COLLECTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

_CONVERTER = "ferrule_kit.vectors:converter"

#: (method, input class in `ferrule_kit.vectors`, description), in the contract's order.
METHODS = (
    ("ensure_collection", "EnsureCollectionInput", "Create the collection, or check it."),
    ("upsert", "UpsertInput", "Insert chunks, replacing those with the same ids."),
    (
        "replace_documents",
        "ReplaceDocumentsInput",
        "Atomically replace every chunk of the named documents.",
    ),
    ("delete", "DeleteInput", "Delete chunks by ids, document ids or metadata filter."),
    ("search", "SearchInput", "The nearest chunks to a vector, filtered by metadata."),
    ("keyword_search", "KeywordSearchInput", "Full-text search, filtered by metadata."),
    ("count", "CountInput", "How many chunks, all or those passing a filter."),
    ("get", "GetInput", "Chunks by id."),
    ("documents", "DocumentsInput", "What is stored of each named document."),
    ("info", "InfoInput", "The collection: dimension, distance, count, capabilities."),
)

_AILOY = "ferrule_kit.ailoy_vectors"

#: Ailoy 0.1's methods (`ferrule_kit.ailoy_vectors`): (method, input class, description,
#: the field a bare JSON array input fills, whether the answer may be a bare value).
AILOY_V0_1_METHODS = (
    ("insert", "InsertInput", "Ailoy 0.1: store one document and its vector -> {id}.", None, False),
    (
        "insert_many",
        "InsertManyInput",
        "Ailoy 0.1: store a list of documents and vectors -> {ids}.",
        "items",
        False,
    ),
    (
        "get_by_id",
        "IdInput",
        "Ailoy 0.1: a document by id -> {id, document, metadata, embedding}, or null.",
        None,
        True,
    ),
    (
        "retrieve",
        "RetrieveInput",
        "Ailoy 0.1: the top_k documents nearest to query_embedding, nearest first -> "
        "{results: [{id, document, metadata, similarity}]}.",
        None,
        False,
    ),
    ("remove", "IdInput", "Ailoy 0.1: remove a document by id -> true.", None, True),
    ("clear", "ClearInput", "Ailoy 0.1: remove every document -> true.", None, True),
)


def _collection(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    # It becomes a table name: an SQL identifier, checked here rather than quoted later.
    if not _COLLECTION.fullmatch(value):
        raise InvalidInputError(
            "must be letters, digits or '_', starting with a letter or '_' (at most 63)",
            field=attribute.name,
        )


@attrs.frozen
class VectorStoreAttributes:
    """What every store's ``define`` takes (stores add where the data lives).

    With ``dimension`` given, the collection is created (or checked) when the component
    is defined; without it, on ``ensure_collection`` or the first ``upsert``.
    """

    collection: str = attrs.field(default="chunks", validator=_collection)
    dimension: int | None = attrs.field(default=None, validator=in_range(1, 65536))
    distance: Distance = "cosine"


def vector_store_type(
    name: str,
    factory: Target,
    attributes: type | str,
    *,
    blocking: bool = True,
    aliases: tuple[str, ...] = (),
    description: str = "",
    ailoy_v0_1: bool = False,
) -> ComponentTypeSpec:
    """Describe a vector-store component type with every method of the contract.

    ``blocking``: True for a store whose methods are plain functions doing I/O (the
    kernel runs them off the event loop); False for ``async def`` methods.
    ``ailoy_v0_1``: the type also answers Ailoy 0.1's methods (`AILOY_V0_1_METHODS`), which
    a blocking store gets by mixing in `ferrule_kit.ailoy_vectors.AiloyVectorStoreMethods`.
    """
    methods = [
        MethodSpec(
            method,
            f"ferrule_kit.vectors:{inputs}",
            blocking=blocking,
            description=text,
            converter=_CONVERTER,
        )
        for method, inputs, text in METHODS
    ]
    if ailoy_v0_1:
        if not blocking:
            raise ValueError("Ailoy 0.1's methods are for blocking stores (blocking=True)")
        methods += [
            MethodSpec(
                method,
                f"{_AILOY}:{inputs}",
                description=text,
                converter=_CONVERTER,
                array_input=array_input,
                value_output=value_output,
            )
            for method, inputs, text, array_input, value_output in AILOY_V0_1_METHODS
        ]
    return ComponentTypeSpec(
        name=name,
        factory=factory,
        attributes=attributes,
        methods=tuple(methods),
        aliases=aliases,
        description=description,
    )
