"""The vector-store contract: a component type that keeps chunks (text, vector, metadata)
in one collection and finds them again by vector, metadata or keywords.

A store component is defined on one collection (`ferrule_kit.embeddings.vectorspec` describes the
type; its attributes always include ``collection``, ``dimension`` and ``distance``)::

    rt.define("sqlite_vec_store", "kb", {"path": "kb.db", "collection": "docs"})
    rt.call_method("kb", "ensure_collection", {"dimension": 384, "distance": "cosine"})
    rt.call_method("kb", "upsert", {"chunks": [
        {"id": "moby-0", "document_id": "moby", "text": "Call me Ishmael.",
         "vector": [0.1, ...], "metadata": {"book": "Moby-Dick", "year": 1851},
         "content_hash": "sha256:9f2c..."}]})
    rt.call_method("kb", "search", {"vector": [...], "top_k": 5, "filter": {"year": {"$lt": 1900}}})
      -> {"matches": [{"id": "moby-0", "document_id": "moby", "text": "Call me Ishmael.",
                       "metadata": {...}, "content_hash": "sha256:9f2c...",
                       "distance": 0.12, "score": 0.88}]}

Methods (inputs are the classes below; outputs are JSON objects):

- ``ensure_collection`` `EnsureCollectionInput` -> `info`'s object. Creates the collection
  with that dimension and distance, or checks an existing one: a different dimension or
  distance raises `DimensionMismatchError` and changes nothing.
- ``upsert`` `UpsertInput` -> ``{"upserted": n}``. A chunk whose ``id`` exists replaces it.
  Upserting into a collection that does not exist yet creates it with the chunks'
  dimension and the store's configured distance.
- ``replace_documents`` `ReplaceDocumentsInput` -> ``{"deleted": n, "inserted": m}``: in
  one transaction, every stored chunk of the named documents (and of the documents the
  new chunks belong to) is deleted and the new chunks inserted. Readers see the old
  version or the new one, never a mix or neither; a failure leaves the old version.
  This is how a changed document's chunks are replaced; an empty ``chunks`` with
  ``document_ids`` removes documents.
- ``delete`` `DeleteInput` -> ``{"deleted": n}``: by chunk ``ids``, by ``document_ids``, or
  by metadata ``filter`` (exactly one of them).
- ``search`` `SearchInput` -> ``{"matches": [Match, ...]}``: the ``top_k`` nearest chunks to
  ``vector`` that pass ``filter``, nearest first.
- ``keyword_search`` `KeywordSearchInput` -> ``{"matches": [...]}``: full-text search, best
  first; ``distance`` is the store's rank (lower is better) and ``score`` its negation.
  Stores without full-text search say ``"keyword_search": false`` in ``info`` and raise
  `UnsupportedOperationError`.
- ``count`` `CountInput` -> ``{"count": n}``, all chunks or those passing ``filter``.
- ``get`` `GetInput` -> ``{"chunks": [...]}``: chunks by id (missing ids are left out),
  with their vectors when ``include_vectors``.
- ``documents`` `DocumentsInput` -> ``{"documents": [{"document_id", "chunks",
  "content_hashes"}]}``: what is stored of each named document (absent ones are left
  out); a caller compares ``content_hashes`` with the hash of the document it holds and
  skips re-inserting an unchanged one.
- ``info`` -> ``{"collection", "dimension", "distance", "count", "keyword_search",
  "exists"}``.

Distances and scores. ``distance`` is what the store computes for the collection's metric,
lower is nearer: cosine distance ``1 - cos``, the Euclidean distance (not squared) for ``l2``, or
``-dot`` for ``dot``. ``score`` is higher-is-better: ``1 - distance`` for cosine, the inner
product for dot, ``-distance`` for l2.

The filter language (``filter`` fields) and its semantics, the same in every store, are
`ferrule_kit.embeddings.vectorfilters`' (`parse_filter`, `matches`: re-exported here).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import attrs
from ferrule_kernel import (
    FerruleError,
    InvalidInputError,
    in_range,
    make_converter,
    register_error_kind,
    type_name,
)

from .vectorfilters import And, Compare, Filter, Not, Or, matches, parse_filter
from .vectorspec import Distance

__all__ = [
    "And",
    "Chunk",
    "Compare",
    "CountInput",
    "DeleteInput",
    "DimensionMismatchError",
    "Distance",
    "DocumentsInput",
    "EnsureCollectionInput",
    "Filter",
    "GetInput",
    "InfoInput",
    "KeywordSearchInput",
    "Not",
    "Or",
    "ReplaceDocumentsInput",
    "SearchInput",
    "UnsupportedOperationError",
    "UpsertInput",
    "VectorStoreUnavailableError",
    "check_collection",
    "check_dimension",
    "check_query_dimension",
    "content_hash",
    "converter",
    "match",
    "matches",
    "no_keyword_search",
    "parse_filter",
    "score",
]

MAX_DIMENSION = 65536
MAX_TOP_K = 1000


# -- errors ------------------------------------------------------------------------------


@register_error_kind
class VectorStoreUnavailableError(FerruleError):
    """The store cannot be reached or opened (a server down, a file that cannot be
    opened). ``details`` carry ``store`` (its component type), ``collection`` and
    ``reason``; never a password."""

    kind = "vector_store_unavailable"


@register_error_kind
class DimensionMismatchError(InvalidInputError):
    """Vectors whose dimension is not the collection's (or a collection asked for with
    another dimension or distance than it has). Raised before anything is written;
    ``details`` carry ``collection``, ``expected`` and ``got``, and ``errors`` the paths."""

    kind = "dimension_mismatch"


@register_error_kind
class UnsupportedOperationError(FerruleError):
    """A method this store does not provide (e.g. ``keyword_search``)."""

    kind = "unsupported_operation"


def no_keyword_search(store: str) -> UnsupportedOperationError:
    """The error of ``keyword_search`` on a store without full-text search (whose ``info``
    says ``"keyword_search": false``), naming the stores that have it."""
    return UnsupportedOperationError(
        f"{store} has no keyword search; use a store that has one "
        "(sqlite_vec_store, pgvector_store)",
        store=store,
    )


# -- filters (the language itself: `ferrule_kit.embeddings.vectorfilters`) ---------------------------


def _filter_field(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    parse_filter(value, attribute.name)


# -- vectors ---------------------------------------------------------------------------------


def _structure_vector(value: Any, _type: Any) -> list[float]:
    # One check per vector in C (map/set), not a structure hook per number: a bulk upsert
    # carries hundreds of thousands of floats.
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"expected array, got {type_name(value)}")
    if not value:
        raise ValueError("must not be empty")
    kinds = set(map(type, value))
    if not kinds <= {float, int}:
        for index, item in enumerate(value):
            if type(item) not in (float, int):
                raise InvalidInputError(
                    f"expected number, got {type_name(item)}", field=f"[{index}]"
                )
    if not all(map(math.isfinite, value)):
        index = next(i for i, x in enumerate(value) if not math.isfinite(x))
        raise InvalidInputError("must be a finite number", field=f"[{index}]")
    if kinds == {float} and type(value) is list:
        return value
    return [float(x) for x in value]


#: The converter store methods are structured with: the kernel's strict one, with vectors
#: checked per vector rather than per number.
converter = make_converter()
converter.register_structure_hook_func(lambda t: t == list[float], _structure_vector)


def _identifier(name: str) -> Any:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and (not value or len(value) > 512):
            raise InvalidInputError(f"{name} must be 1 to 512 characters", field=attribute.name)

    return check


def _identifiers(_instance: Any, attribute: attrs.Attribute[Any], values: Any) -> None:
    if values is None:
        return
    for index, value in enumerate(values):
        if not value or len(value) > 512:
            raise InvalidInputError(
                "must be 1 to 512 characters", field=f"{attribute.name}[{index}]"
            )


@attrs.frozen
class Chunk:
    """One stored piece of a document. ``content_hash`` is whatever the caller uses to
    recognise unchanged content (the store keeps and returns it, never computes it):
    `content_hash` of the whole document version, so that an unchanged document is
    skipped, or of the chunk's own text."""

    id: str = attrs.field(validator=_identifier("id"))
    vector: list[float]
    text: str = ""
    document_id: str | None = attrs.field(default=None, validator=_identifier("document_id"))
    content_hash: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)

    def to_dict(self, include_vector: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "document_id": self.document_id,
            "text": self.text,
            "content_hash": self.content_hash,
            "metadata": self.metadata,
        }
        if include_vector:
            out["vector"] = self.vector
        return out


def _unique_ids(_instance: Any, _attribute: Any, chunks: list[Chunk]) -> None:
    seen: set[str] = set()
    for index, chunk in enumerate(chunks):
        if chunk.id in seen:
            raise InvalidInputError(f"duplicate chunk id {chunk.id!r}", field=f"chunks[{index}].id")
        seen.add(chunk.id)


@attrs.frozen
class EnsureCollectionInput:
    dimension: int = attrs.field(validator=in_range(1, MAX_DIMENSION))
    distance: Distance = "cosine"


@attrs.frozen
class UpsertInput:
    chunks: list[Chunk] = attrs.field(validator=_unique_ids)


@attrs.frozen
class ReplaceDocumentsInput:
    """Replace documents atomically: every chunk must name its ``document_id``."""

    chunks: list[Chunk] = attrs.field(validator=_unique_ids)
    #: Documents whose stored chunks go (the new chunks' documents go in any case).
    document_ids: list[str] = attrs.field(factory=list, validator=_identifiers)

    def __attrs_post_init__(self) -> None:
        for index, chunk in enumerate(self.chunks):
            if chunk.document_id is None:
                raise InvalidInputError(
                    "required here: replace_documents replaces whole documents",
                    field=f"chunks[{index}].document_id",
                )
        if not self.chunks and not self.document_ids:
            raise InvalidInputError("give chunks, document_ids or both", field="chunks")

    def all_document_ids(self) -> list[str]:
        """The documents to clear: the named ones and the new chunks' own, once each."""
        ids = dict.fromkeys(self.document_ids)
        ids.update(dict.fromkeys(c.document_id for c in self.chunks if c.document_id))
        return list(ids)


@attrs.frozen
class DeleteInput:
    """Delete by exactly one selector."""

    ids: list[str] | None = attrs.field(default=None, validator=_identifiers)
    document_ids: list[str] | None = attrs.field(default=None, validator=_identifiers)
    filter: dict[str, Any] | None = attrs.field(default=None, validator=_filter_field)

    def __attrs_post_init__(self) -> None:
        given = [n for n in ("ids", "document_ids", "filter") if getattr(self, n) is not None]
        if len(given) != 1:
            raise InvalidInputError(
                "give exactly one of ids, document_ids or filter"
                + (f" (got {', '.join(given)})" if given else ""),
                field="$",
            )
        if self.filter is not None and parse_filter(self.filter) is None:
            # An empty filter matches everything; deleting everything is not said by omission.
            raise InvalidInputError("an empty filter would delete every chunk", field="filter")

    @property
    def where(self) -> Filter | None:
        return parse_filter(self.filter)


@attrs.frozen
class SearchInput:
    vector: list[float]
    top_k: int = attrs.field(default=10, validator=in_range(1, MAX_TOP_K))
    filter: dict[str, Any] | None = attrs.field(default=None, validator=_filter_field)

    @property
    def where(self) -> Filter | None:
        return parse_filter(self.filter)


def _query(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value.strip():
        raise InvalidInputError("must not be empty", field=attribute.name)


@attrs.frozen
class KeywordSearchInput:
    query: str = attrs.field(validator=_query)
    top_k: int = attrs.field(default=10, validator=in_range(1, MAX_TOP_K))
    filter: dict[str, Any] | None = attrs.field(default=None, validator=_filter_field)

    @property
    def where(self) -> Filter | None:
        return parse_filter(self.filter)


@attrs.frozen
class CountInput:
    filter: dict[str, Any] | None = attrs.field(default=None, validator=_filter_field)

    @property
    def where(self) -> Filter | None:
        return parse_filter(self.filter)


@attrs.frozen
class GetInput:
    ids: list[str] = attrs.field(validator=_identifiers)
    include_vectors: bool = False


@attrs.frozen
class DocumentsInput:
    document_ids: list[str] = attrs.field(validator=_identifiers)


@attrs.frozen
class InfoInput:
    """``info`` takes nothing."""


# -- helpers for stores ------------------------------------------------------------------------


def content_hash(text: str) -> str:
    """``"sha256:<hex>"`` of ``text`` (UTF-8): the hash Knowledge puts on chunks."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_dimension(chunks: list[Chunk], dimension: int | None, collection: str) -> int | None:
    """Refuse (`DimensionMismatchError`, naming each bad chunk) vectors that are not
    ``dimension`` long; with ``dimension`` None (no collection yet), vectors that differ
    from the first one. Returns the chunks' dimension (None for no chunks)."""
    if not chunks:
        return dimension
    expected = dimension if dimension is not None else len(chunks[0].vector)
    bad = [(i, len(c.vector)) for i, c in enumerate(chunks) if len(c.vector) != expected]
    if bad:
        got = sorted({n for _, n in bad})
        errors = [
            {
                "path": f"$.chunks[{i}].vector",
                "message": f"has {n} dimensions; collection {collection!r} has {expected}",
            }
            for i, n in bad[:20]
        ]
        raise DimensionMismatchError(
            f"{len(bad)} vector(s) of dimension {', '.join(map(str, got))} for collection "
            f"{collection!r} of dimension {expected}: nothing was written",
            errors=errors,
            collection=collection,
            expected=expected,
            got=got,
        )
    return expected


def check_query_dimension(vector: list[float], dimension: int | None, collection: str) -> None:
    """Refuse a search vector of another dimension than the collection's."""
    if dimension is not None and len(vector) != dimension:
        raise DimensionMismatchError(
            f"query vector of dimension {len(vector)} for collection {collection!r} of "
            f"dimension {dimension}",
            field="$.vector",
            collection=collection,
            expected=dimension,
            got=[len(vector)],
        )


def check_collection(
    collection: str,
    have: tuple[int, str],
    want: tuple[int, str],
) -> None:
    """Refuse ``ensure_collection`` asking for another (dimension, distance) than exists."""
    if have != want:
        raise DimensionMismatchError(
            f"collection {collection!r} has dimension {have[0]} and distance {have[1]!r}; "
            f"asked for dimension {want[0]} and distance {want[1]!r}",
            field="$.dimension" if have[0] != want[0] else "$.distance",
            collection=collection,
            expected=have[0],
            got=[want[0]],
        )


def score(distance_metric: str, distance: float) -> float:
    """The higher-is-better score for a distance (see the module docstring)."""
    if distance_metric == "cosine":
        return 1.0 - distance
    return -distance


def match(
    id: str,
    document_id: str | None,
    text: str,
    metadata: dict[str, Any],
    content_hash: str | None,
    *,
    distance: float,
    score: float,
) -> dict[str, Any]:
    """One ``search`` / ``keyword_search`` result, in the contract's shape (the two numbers
    by name: they are both floats, and a swap would still type-check)."""
    return {
        "id": id,
        "document_id": document_id,
        "text": text,
        "metadata": metadata,
        "content_hash": content_hash,
        "distance": distance,
        "score": score,
    }
