"""Vector databases for `Knowledge`: descriptions of a vector-store component.

    from ferrule.knowledge.vectordb import PgVector, SqliteVecDb
    Knowledge(vector_db=SqliteVecDb(db_file="tmp/knowledge.db"))
    Knowledge(vector_db=PgVector(table_name="documents", db_url="postgresql://..."))

As `ferrule.db.SqliteDb` describes a storage component, these describe a store of the
contract in `ferrule_kit.embeddings.vectors` (``sqlite_vec_store`` from ferrule-sqlite-vec,
``pgvector_store`` from ferrule-pgvector): `Knowledge` defines it on its runtime when first
needed, so the store lives wherever the runtime does. Any `VectorDb` works, and so does
the name of a store component already defined on the runtime.

``table_name`` is the store's collection; ``search_type`` is how `Knowledge.search`
looks: ``"vector"`` (nearest embeddings, the default), ``"keyword"`` (the store's
full-text search) or ``"hybrid"`` (both, fused by reciprocal rank: on the labelled set of
docs/benchmarks.md it finds more answers than either alone). ``embedder``, as in Agno, may sit here instead of on `Knowledge`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.stores.dburls import libpq_url

from ..vectordb.search import SearchType, SearchTypeName

__all__ = ["PgVector", "SearchType", "SearchTypeName", "SqliteVecDb", "VectorDb"]

SEARCH_TYPES = ("vector", "keyword", "hybrid")
Distance = Literal["cosine", "dot", "l2"]


@runtime_checkable
class VectorDb(Protocol):
    """A vector-store component description: its component type, the attributes to define
    it with on ``runtime``, and how `Knowledge` searches it."""

    component_type: str
    search_type: str
    embedder: Any

    def attributes(self, runtime: Any) -> dict[str, Any]: ...


def search_type_name(value: SearchType | SearchTypeName) -> SearchTypeName:
    """The plain name of a search type given as Agno's `SearchType` member or a string
    (an unknown one is left for the validator to refuse by name)."""
    return value.value if isinstance(value, SearchType) else value


def _search_type(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if value not in SEARCH_TYPES:
        raise InvalidInputError(
            f"expected one of {', '.join(SEARCH_TYPES)}, got {value!r}", field=attribute.name
        )


@attrs.frozen
class SqliteVecDb:
    """Chunks in one SQLite file (sqlite-vec): ``SqliteVecDb(db_file="tmp/kb.db")`` (a path on
    this machine, relative to the working directory, its folder created), or
    ``SqliteVecDb(store="kb.db")`` (a file in the storage directory of the host the runtime
    runs on, ``$FERRULE_STORAGE_DIR``). With neither, the host's ``ferrule-vectors.db``.
    Several ``table_name``s live in one file."""

    component_type: ClassVar[str] = "sqlite_vec_store"

    table_name: str = "knowledge"
    db_file: str | os.PathLike[str] | None = None
    store: str | None = None
    search_type: SearchTypeName = attrs.field(
        default="vector", converter=search_type_name, validator=_search_type
    )
    #: The metric; None: the one the embedder was trained for.
    distance: Distance | None = None
    embedder: Any = None

    def __attrs_post_init__(self) -> None:
        if self.db_file is not None and self.store is not None:
            raise InvalidInputError("give db_file or store, not both", field="db_file")

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {"collection": self.table_name}
        if self.db_file is not None:
            path = Path(self.db_file).expanduser().resolve()
            if getattr(runtime, "kernel", None) is not None:  # the file is on this machine
                path.parent.mkdir(parents=True, exist_ok=True)
            attributes["path"] = str(path)
        elif self.store is not None:
            attributes["db_file"] = self.store
        return attributes


@attrs.frozen
class PgVector:
    """PostgreSQL with pgvector: ``PgVector(table_name="documents",
    db_url="postgresql://user:pass@host:5432/db")`` (Agno's ``postgresql+psycopg://`` URLs
    work too). With no ``db_url`` the host's ``$FERRULE_POSTGRES_DSN``. ``schema``: the
    PostgreSQL schema holding the table (default ``ferrule``, created if missing)."""

    component_type: ClassVar[str] = "pgvector_store"

    table_name: str = "knowledge"
    db_url: str | None = attrs.field(default=None, repr=False)  # it may hold a password
    schema: str | None = None
    search_type: SearchTypeName = attrs.field(
        default="vector", converter=search_type_name, validator=_search_type
    )
    distance: Distance | None = None
    embedder: Any = None

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {"collection": self.table_name}
        if self.db_url is not None:
            attributes["dsn"] = libpq_url(self.db_url)
        if self.schema is not None:
            attributes["schema"] = self.schema
        return attributes
