"""Describing a vector-store component type, for a plugin's hook module.

Like `ferrule_kit.models.lmspec`, this stays cheap to import: the methods name the contract's
input classes (`ferrule_kit.embeddings.vectors`) and its converter as strings, imported when a store
is first defined. `VectorStoreAttributes` is the base of every store's ``define``
attributes.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs
from ferrule_kernel import ComponentTypeSpec, InvalidInputError, MethodSpec, Target, in_range

__all__ = [
    "COLLECTION_NAME",
    "METHODS",
    "Distance",
    "VectorStoreAttributes",
    "vector_store_type",
]

Distance = Literal["cosine", "dot", "l2"]

#: A collection name the SQL stores take (it becomes a table name).
COLLECTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

_CONVERTER = "ferrule_kit.embeddings.vectors:converter"

#: (method, input class in `ferrule_kit.embeddings.vectors`, description), in the contract's order.
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


def _collection(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    # It becomes a table name: an SQL identifier, checked here rather than quoted later.
    if not COLLECTION_NAME.fullmatch(value):
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
) -> ComponentTypeSpec:
    """Describe a vector-store component type with every method of the contract.

    ``blocking``: True for a store whose methods are plain functions doing I/O (the
    kernel runs them off the event loop); False for ``async def`` methods.
    """
    methods = tuple(
        MethodSpec(
            method,
            f"ferrule_kit.embeddings.vectors:{inputs}",
            blocking=blocking,
            description=text,
            converter=_CONVERTER,
        )
        for method, inputs, text in METHODS
    )
    return ComponentTypeSpec(
        name=name,
        factory=factory,
        attributes=attributes,
        methods=methods,
        aliases=aliases,
        description=description,
    )
