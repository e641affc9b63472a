"""Agno's ``agno.vectordb.pgvector.pgvector``: `PgVector`, chunks in a PostgreSQL table with
pgvector (ferrule-pgvector's ``pgvector_store``): ``PgVector(table_name="docs",
db_url="postgresql+psycopg://...")``, in schema ``ai`` as Agno's.

It is a `ferrule.vectordb.base.VectorDb` (its own methods) and what `Knowledge` takes,
described as `ferrule.knowledge.vectordb.PgVector` describes the store, plus the index
(`HNSW`: ``vector_index``; None scans exactly). ``vector_score_weight`` weighs the vector
ranking in a hybrid search. Full-text search stems English (``content_language``); the
store makes and migrates its own schema and tables. Refused, naming what to do instead:
an SQLAlchemy ``db_engine`` (give ``db_url``), the SQLAlchemy objects (``Session``,
``table``, ``metadata``, ``get_table``), prefix matching, another language, turning the
schema's creation or upgrade off or on, and recreating indexes (``optimize(force_recreate=True)``).
"""

from __future__ import annotations

import copy
from typing import Any

from ferrule_kernel import InvalidInputError

from ...knowledge.document.base import Document
from ..base import VectorDb
from ..distance import Distance, store_distance
from ..search import SearchType
from .index import HNSW

__all__ = ["NO_PREFIX", "NO_SQLALCHEMY", "PgVector"]

NO_SQLALCHEMY = (
    "ferrule-pgvector connects with psycopg, not SQLAlchemy: give db_url (a postgresql:// "
    "or postgresql+psycopg:// URL); there is no engine, session, table or metadata object"
)
NO_PREFIX = (
    "prefix matching: ferrule-pgvector's full-text search matches whole (stemmed) words; "
    "use search_type='hybrid' to find near words by meaning"
)
NO_LANGUAGE = "ferrule-pgvector's full-text search stems English: content_language='english'"
OWN_SCHEMA = "ferrule-pgvector makes and migrates its own schema and tables"
#: Agno's default index (each PgVector gets its own copy).
_DEFAULT_INDEX = HNSW()


class PgVector(VectorDb):
    """``PgVector(table_name="docs", db_url=...)`` (see the module docstring)."""

    component_type: str = "pgvector_store"
    table_name: str
    schema: str
    db_url: str | None
    vector_index: HNSW | None
    vector_score_weight: float
    content_language: str
    auto_upgrade_schema: bool
    create_schema: bool

    def __init__(
        self,
        table_name: str,
        schema: str = "ai",
        *,
        name: str | None = None,
        description: str | None = None,
        id: str | None = None,
        db_url: str | None = None,
        db_engine: Any = None,
        embedder: Any = None,
        search_type: SearchType | str = SearchType.vector,
        vector_index: HNSW | None = _DEFAULT_INDEX,
        distance: Distance | str = Distance.cosine,
        prefix_match: bool = False,
        vector_score_weight: float = 0.5,
        content_language: str = "english",
        auto_upgrade_schema: bool = False,
        reranker: Any = None,
        create_schema: bool = True,
        similarity_threshold: float | None = None,
    ) -> None:
        for field, given, note in (
            ("db_engine", db_engine is not None, NO_SQLALCHEMY),
            ("prefix_match", prefix_match, NO_PREFIX),
            ("content_language", content_language != "english", NO_LANGUAGE),
            ("auto_upgrade_schema", auto_upgrade_schema, OWN_SCHEMA),
            ("create_schema", not create_schema, OWN_SCHEMA),
        ):
            if given:
                raise InvalidInputError(note, field=field)
        if vector_index is not None and not isinstance(vector_index, HNSW):
            raise InvalidInputError("vector_index is an HNSW() or None", field="vector_index")
        if not 0.0 <= vector_score_weight <= 1.0:
            raise InvalidInputError("must be from 0.0 to 1.0", field="vector_score_weight")
        self.table_name = table_name
        self.schema = schema
        self.db_url = db_url
        self.embedder = embedder
        self.search_type = SearchType(search_type)
        self.vector_index = copy.deepcopy(vector_index)
        self.distance = Distance(distance)
        self.vector_score_weight = vector_score_weight
        self.hybrid_weight = vector_score_weight
        self.content_language = content_language
        self.auto_upgrade_schema = auto_upgrade_schema
        self.reranker = reranker
        self.create_schema = create_schema
        super().__init__(
            id=id, name=name, description=description, similarity_threshold=similarity_threshold
        )
        self._description()  # the names checked now

    def __repr__(self) -> str:
        return f"PgVector(table_name={self.table_name!r}, schema={self.schema!r})"

    def _description(self) -> Any:
        from ...knowledge.vectordb import PgVector as Described

        return Described(
            table_name=self.table_name,
            db_url=self.db_url,
            schema=self.schema,
            search_type=self.search_type.value,
            distance=store_distance(self.distance),  # type: ignore[arg-type]
            embedder=self.embedder,
        )

    def attributes(self, runtime: Any) -> dict[str, Any]:
        """The store's attributes: the table, the database, the schema and the index."""
        out: dict[str, Any] = self._description().attributes(runtime)
        out.update(
            self.vector_index.attributes() if self.vector_index is not None else {"index": "none"}
        )
        return out

    @property
    def prefix_match(self) -> bool:
        return False

    @property
    def dimensions(self) -> int:
        """The embedder's vector size."""
        from ...knowledge.embeddings import embedder_info

        return int(embedder_info(self._embedder())["dimension"])

    # -- refused ------------------------------------------------------------------------

    @property
    def db_engine(self) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="db_engine")

    @property
    def Session(self) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="Session")

    @property
    def table(self) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="table")

    @property
    def metadata(self) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="metadata")

    def get_table(self) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="get_table")

    def get_table_v1(self) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="get_table_v1")

    def enable_prefix_matching(self, query: str) -> str:
        raise InvalidInputError(NO_PREFIX, field="prefix_match")

    # -- Agno's PgVector methods ------------------------------------------------------------

    def table_exists(self) -> bool:
        """Whether the table exists."""
        return self.exists()

    def optimize(self, force_recreate: bool = False) -> None:
        """Make sure the table and its indexes exist (the store builds them)."""
        if force_recreate:
            raise InvalidInputError(
                "ferrule-pgvector keeps the index it built with the table; drop and fill the "
                "table again to build another",
                field="force_recreate",
            )
        self.create()

    async def _batches(
        self, content_hash: str, documents: list[Any], filters: Any, batch_size: int
    ) -> None:
        if batch_size < 1:
            raise InvalidInputError("must be at least 1", field="batch_size")
        for start in range(0, len(documents), batch_size):
            await VectorDb.async_upsert(
                self, content_hash, documents[start : start + batch_size], filters
            )

    async def async_insert(  # type: ignore[override]
        self, content_hash: str, documents: list[Any], filters: Any = None, batch_size: int = 100
    ) -> None:
        """Store the documents, ``batch_size`` at a time."""
        await self._batches(content_hash, documents, filters, batch_size)

    async def async_upsert(  # type: ignore[override]
        self, content_hash: str, documents: list[Any], filters: Any = None, batch_size: int = 100
    ) -> None:
        """Store the documents, replacing chunks of the same ids, ``batch_size`` at a time."""
        await self._batches(content_hash, documents, filters, batch_size)

    def insert(  # type: ignore[override]
        self, content_hash: str, documents: list[Any], filters: Any = None, batch_size: int = 100
    ) -> None:
        """`async_insert`, waited for."""
        self._run(self.async_insert(content_hash, documents, filters, batch_size))

    def upsert(  # type: ignore[override]
        self, content_hash: str, documents: list[Any], filters: Any = None, batch_size: int = 100
    ) -> None:
        """`async_upsert`, waited for."""
        self._run(self.async_upsert(content_hash, documents, filters, batch_size))

    async def async_name_exists(self, name: str) -> bool:  # type: ignore[override]
        """Whether a chunk of a document named ``name`` is stored."""
        return bool(await self._count({"name": name}))

    def vector_search(self, query: str, limit: int = 5, filters: Any = None) -> list[Document]:
        """The documents nearest ``query`` by meaning."""
        found: list[Document] = self._run(self._search(query, limit, filters, "vector"))
        return found

    def keyword_search(self, query: str, limit: int = 5, filters: Any = None) -> list[Document]:
        """The documents best matching ``query``'s words."""
        found: list[Document] = self._run(self._search(query, limit, filters, "keyword"))
        return found

    def hybrid_search(self, query: str, limit: int = 5, filters: Any = None) -> list[Document]:
        """Both, fused (the vector ranking weighing ``vector_score_weight``)."""
        found: list[Document] = self._run(self._search(query, limit, filters, "hybrid"))
        return found
