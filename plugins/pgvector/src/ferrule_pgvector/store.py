"""The `pgvector_store` component: `ferrule_kit.embeddings.vectors`' contract on PostgreSQL + pgvector.

Layout, in the schema ``S`` (created if missing), per collection ``C``:

- ``S."C"``: one row per chunk: ``id`` (primary key), ``document_id`` (indexed),
  ``text``, ``content_hash``, ``metadata`` (JSONB), ``embedding vector(n)``, and ``tsv``, a
  generated ``tsvector`` of the text (English stemming) with a GIN index for
  ``keyword_search``;
- an HNSW index on ``embedding`` with the operator class of the collection's distance,
  built with ``hnsw_m`` and ``hnsw_ef_construction`` (unless ``index: "none"``, or over
  2,000 dimensions, HNSW's limit for ``vector``);
- ``S.ferrule_vector_collections``: each collection's dimension, distance and schema
  version.

Distances are pgvector's operators: ``<=>`` (cosine distance), ``<->`` (Euclidean) and
``<#>`` (the negative inner product), which are the contract's distances as they stand.
A filtered HNSW search runs with ``hnsw.iterative_scan = strict_order`` so that a
selective filter still returns ``top_k`` chunks, in order.

Methods are plain functions on psycopg's (synchronous) connection pool: a synchronous
caller runs them in its own thread, an async one in a worker thread (the kernel's
rule for blocking methods), so a search costs one round trip and no hop between threads.
Each write is one transaction. The connection string may hold a password: it is kept
out of reprs, logs and errors (the store is named ``host:port/dbname``).
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs
import psycopg
import psycopg_pool
from ferrule_kernel import get_logger, scrub_secrets
from ferrule_kit.embeddings.vectors import (
    Chunk,
    CountInput,
    DeleteInput,
    DocumentsInput,
    EnsureCollectionInput,
    GetInput,
    InfoInput,
    KeywordSearchInput,
    ReplaceDocumentsInput,
    SearchInput,
    UpsertInput,
    VectorStoreUnavailableError,
    check_collection,
    check_dimension,
    check_query_dimension,
    match,
    score,
)
from ferrule_kit.stores.dburls import postgres_dsn
from psycopg import sql
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg.types import TypeInfo

from .plugin import COMPONENT_TYPE, DSN_ENV, PgVectorAttributes
from .sql import compile_filter

log = get_logger("ferrule.pgvector")

SCHEMA_VERSION = 1
#: HNSW indexes ``vector`` columns of at most this many dimensions.
HNSW_MAX_DIMENSION = 2000
_OPERATOR = {"cosine": "<=>", "l2": "<->", "dot": "<#>"}
_OPCLASS = {"cosine": "vector_cosine_ops", "l2": "vector_l2_ops", "dot": "vector_ip_ops"}
_WORD = re.compile(r"\w+", re.UNICODE)


@attrs.frozen
class Embedding:
    """A vector parameter, sent in pgvector's binary form: float32s packed in C, where the
    text form would cost a Python ``repr`` per number (most of a search's client time)."""

    values: Sequence[float]


def _dumper(oid: int) -> type[Dumper]:
    class EmbeddingDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: Embedding) -> bytes:
            n = len(obj.values)
            # pgvector's vector_recv: int16 dimension, int16 unused, float4s, big-endian
            return struct.pack(f">HH{n}f", n, 0, *obj.values)

    EmbeddingDumper.oid = oid
    return EmbeddingDumper


def _floats(text: str) -> list[float]:
    return [float(x) for x in json.loads(text)]


def ts_query(text: str) -> str:
    """A user's words as a ``to_tsquery`` string: any of the words (``w1 | w2``), each
    only letters, digits and ``_``, so nothing the user typed is query syntax."""
    return " | ".join(dict.fromkeys(w.lower() for w in _WORD.findall(text)))


class PgVectorStore:
    def __init__(
        self,
        pool: psycopg_pool.ConnectionPool,
        attributes: PgVectorAttributes,
        store: str,
        secrets: list[str],
    ) -> None:
        self._pool = pool
        self.attributes = attributes
        self.collection = attributes.collection
        self.store = store
        self._secrets = secrets
        self.table = sql.Identifier(attributes.schema, attributes.collection)
        self.registry = sql.Identifier(attributes.schema, "ferrule_vector_collections")
        self.dimension: int | None = None
        self.distance: str = attributes.distance

    @classmethod
    def open(cls, attributes: PgVectorAttributes) -> PgVectorStore:
        dsn, store, secrets = postgres_dsn(attributes.dsn, DSN_ENV)
        connect: dict[str, Any] = {"connect_timeout": attributes.connect_timeout}

        dumper: list[type[Dumper]] = []  # pgvector's type oid is known after the migration

        def configure(conn: psycopg.Connection[Any]) -> None:
            conn.adapters.register_dumper(Embedding, dumper[0])
            # Set once per connection, so that an unfiltered search is one round trip.
            conn.execute(
                sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(attributes.ef_search))
            )

        pool = psycopg_pool.ConnectionPool(
            dsn,
            min_size=attributes.min_size,
            max_size=attributes.max_size,
            timeout=attributes.timeout,
            # Reads are single statements; writes open their own transactions.
            kwargs={**connect, "autocommit": True},
            configure=configure,
            # No check on every checkout (a round trip per search): a connection broken by
            # a server restart fails its one call with VectorStoreUnavailableError, and the
            # pool replaces it.
            name=f"ferrule-pgvector {store}",
            open=False,
        )
        self = cls(pool, attributes, store, secrets)
        with self._errors():
            with psycopg.Connection.connect(dsn, autocommit=True, **connect) as conn:
                self._migrate(conn)
                info = TypeInfo.fetch(conn, "vector")
            assert info is not None, "CREATE EXTENSION vector made the type"
            dumper.append(_dumper(info.oid))
            pool.open()
        if attributes.dimension is not None:
            self.ensure_collection(EnsureCollectionInput(attributes.dimension, attributes.distance))
        return self

    def __repr__(self) -> str:
        return f"PgVectorStore({self.store!r}, collection={self.collection!r})"

    def close(self) -> None:
        self._pool.close()

    # -- errors and connections --------------------------------------------------------------

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """psycopg's failures to reach the server become one typed error naming the store."""
        try:
            yield
        except (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout) as exc:
            reason = scrub_secrets(str(exc).strip() or type(exc).__name__, self._secrets)
            raise VectorStoreUnavailableError(
                f"{COMPONENT_TYPE} {self.store} is unavailable: {reason}",
                store=COMPONENT_TYPE,
                collection=self.collection,
                server=self.store,
                reason=reason,
            ) from None

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        with self._errors(), self._pool.connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def _read(self) -> Iterator[psycopg.Connection[Any]]:
        with self._errors(), self._pool.connection() as conn:
            yield conn

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        schema = sql.Identifier(self.attributes.schema)
        # Serialise concurrent first starts (CREATE ... IF NOT EXISTS races in PostgreSQL).
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('ferrule_pgvector'))")
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} (name text PRIMARY KEY,"
                    " dimension integer NOT NULL, distance text NOT NULL,"
                    " schema_version integer NOT NULL)"
                ).format(self.registry)
            )

    def _load(self, conn: psycopg.Connection[Any]) -> None:
        if self.dimension is not None:
            return  # a collection's dimension and distance never change once made
        cursor = conn.execute(
            sql.SQL("SELECT dimension, distance FROM {} WHERE name = %s").format(self.registry),
            (self.collection,),
        )
        row = cursor.fetchone()
        if row is not None:
            self.dimension, self.distance = int(row[0]), str(row[1])

    def _create(self, conn: psycopg.Connection[Any], dimension: int, distance: str) -> None:
        conn.execute(
            sql.SQL("SELECT pg_advisory_xact_lock(hashtext({}))").format(
                sql.Literal(f"{self.attributes.schema}.{self.collection}")
            )
        )
        self._load(conn)  # made by another process while this one waited
        if self.dimension is not None:
            return
        t = self.table
        name = self.collection
        conn.execute(
            sql.SQL(
                "CREATE TABLE {t} (id text PRIMARY KEY, document_id text, text text NOT NULL,"
                " content_hash text, metadata jsonb NOT NULL, embedding vector({n}) NOT NULL,"
                " tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED)"
            ).format(t=t, n=sql.Literal(dimension))
        )
        conn.execute(
            sql.SQL("CREATE INDEX {} ON {} (document_id)").format(
                sql.Identifier(f"{name}_document"), t
            )
        )
        conn.execute(
            sql.SQL("CREATE INDEX {} ON {} USING gin (tsv)").format(
                sql.Identifier(f"{name}_tsv"), t
            )
        )
        if self.attributes.index == "hnsw" and dimension <= HNSW_MAX_DIMENSION:
            memory = self.attributes.maintenance_work_mem
            if memory is not None:
                conn.execute(
                    sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(memory))
                )
            conn.execute(
                sql.SQL(
                    "CREATE INDEX {} ON {} USING hnsw (embedding {}) WITH (m = {}, ef_construction = {})"
                ).format(
                    sql.Identifier(f"{name}_hnsw"),
                    t,
                    sql.SQL(_OPCLASS[distance]),
                    sql.Literal(self.attributes.hnsw_m),
                    sql.Literal(
                        max(self.attributes.hnsw_ef_construction, 2 * self.attributes.hnsw_m)
                    ),
                )
            )
        conn.execute(
            sql.SQL("INSERT INTO {} VALUES (%s, %s, %s, %s)").format(self.registry),
            (self.collection, dimension, distance, SCHEMA_VERSION),
        )
        self.dimension, self.distance = dimension, distance
        log.debug("collection_created", store=self.store, collection=self.collection)

    # -- methods -----------------------------------------------------------------------------

    def _count(self, conn: psycopg.Connection[Any], node: Any) -> int:
        params: list[Any] = []
        where = compile_filter(node, params)
        cursor = conn.execute(
            sql.SQL("SELECT count(*) FROM {} WHERE ").format(self.table) + sql.SQL(where), params
        )
        row = cursor.fetchone()
        return int(row[0]) if row else 0

    def info(self, inputs: InfoInput | None = None) -> dict[str, Any]:
        with self._read() as conn:
            self._load(conn)
            count = self._count(conn, None) if self.dimension is not None else 0
        return {
            "collection": self.collection,
            "exists": self.dimension is not None,
            "dimension": self.dimension,
            "distance": self.distance,
            "count": count,
            "keyword_search": True,
        }

    def ensure_collection(self, inputs: EnsureCollectionInput) -> dict[str, Any]:
        with self._transaction() as conn:
            self._load(conn)
            if self.dimension is None:
                self._create(conn, inputs.dimension, inputs.distance)
            if self.dimension is not None:
                check_collection(
                    self.collection,
                    (self.dimension, self.distance),
                    (inputs.dimension, inputs.distance),
                )
        return self.info()

    def _ready_for(self, conn: psycopg.Connection[Any], chunks: list[Chunk]) -> None:
        """Inside the write transaction: refuse a wrong dimension before any write, and
        create the collection on first use."""
        self._load(conn)
        dimension = check_dimension(chunks, self.dimension, self.collection)
        if self.dimension is None and dimension is not None:
            self._create(conn, dimension, self.attributes.distance)
            check_dimension(chunks, self.dimension, self.collection)

    def _insert(self, conn: psycopg.Connection[Any], chunks: list[Chunk]) -> None:
        with conn.cursor() as cursor:
            cursor.executemany(
                sql.SQL(
                    "INSERT INTO {} (id, document_id, text, content_hash, metadata, embedding)"
                    " VALUES (%s, %s, %s, %s, %s::jsonb, %b)"
                    " ON CONFLICT (id) DO UPDATE SET document_id = excluded.document_id,"
                    " text = excluded.text, content_hash = excluded.content_hash,"
                    " metadata = excluded.metadata, embedding = excluded.embedding"
                ).format(self.table),
                [
                    (
                        c.id,
                        c.document_id,
                        c.text,
                        c.content_hash,
                        json.dumps(c.metadata, ensure_ascii=False),
                        Embedding(c.vector),
                    )
                    for c in chunks
                ],
            )

    def upsert(self, inputs: UpsertInput) -> dict[str, Any]:
        with self._transaction() as conn:
            self._ready_for(conn, inputs.chunks)
            if inputs.chunks:
                self._insert(conn, inputs.chunks)
        return {"upserted": len(inputs.chunks)}

    def replace_documents(self, inputs: ReplaceDocumentsInput) -> dict[str, Any]:
        with self._transaction() as conn:  # the old version or the new one
            self._ready_for(conn, inputs.chunks)
            if self.dimension is None:
                return {"deleted": 0, "inserted": 0}
            cursor = conn.execute(
                sql.SQL("DELETE FROM {} WHERE document_id = ANY(%s)").format(self.table),
                (inputs.all_document_ids(),),
            )
            deleted = cursor.rowcount
            if inputs.chunks:
                self._insert(conn, inputs.chunks)
        return {"deleted": deleted, "inserted": len(inputs.chunks)}

    def delete(self, inputs: DeleteInput) -> dict[str, Any]:
        params: list[Any] = []
        if inputs.ids is not None:
            where, params = "id = ANY(%s)", [inputs.ids]
        elif inputs.document_ids is not None:
            where, params = "document_id = ANY(%s)", [inputs.document_ids]
        else:
            where = compile_filter(inputs.where, params)
        with self._transaction() as conn:
            self._load(conn)
            if self.dimension is None:
                return {"deleted": 0}
            cursor = conn.execute(
                sql.SQL("DELETE FROM {} WHERE ").format(self.table) + sql.SQL(where), params
            )
            return {"deleted": cursor.rowcount}

    def count(self, inputs: CountInput) -> dict[str, Any]:
        with self._read() as conn:
            self._load(conn)
            if self.dimension is None:
                return {"count": 0}
            return {"count": self._count(conn, inputs.where)}

    def search(self, inputs: SearchInput) -> dict[str, Any]:
        # Settings for this search only (SET LOCAL) need a transaction; a plain search is
        # one statement.
        wide = inputs.top_k > self.attributes.ef_search
        filtered = inputs.where is not None
        with self._transaction() if wide or filtered else self._read() as conn:
            self._load(conn)
            if self.dimension is None:
                return {"matches": []}
            check_query_dimension(inputs.vector, self.dimension, self.collection)
            operator = _OPERATOR[self.distance]
            query = Embedding(inputs.vector)
            params: list[Any] = [query]
            where = compile_filter(inputs.where, params)
            params += [query, inputs.top_k]
            if wide:  # HNSW returns at most ef_search candidates
                conn.execute(
                    sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(inputs.top_k))
                )
            if filtered:  # keep scanning the index until top_k chunks pass the filter
                conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            cursor = conn.execute(
                sql.SQL(
                    "SELECT id, document_id, text, metadata, content_hash,"
                    " embedding {op} %b AS d FROM {t} WHERE "
                ).format(op=sql.SQL(operator), t=self.table)
                + sql.SQL(where)
                + sql.SQL(" ORDER BY embedding {op} %b LIMIT %s").format(op=sql.SQL(operator)),
                params,
            )
            rows = cursor.fetchall()
        metric = self.distance
        return {
            "matches": [
                match(*r[:5], distance=float(r[5]), score=score(metric, float(r[5]))) for r in rows
            ]
        }

    def keyword_search(self, inputs: KeywordSearchInput) -> dict[str, Any]:
        words = ts_query(inputs.query)
        if not words:
            return {"matches": []}
        with self._read() as conn:
            self._load(conn)
            if self.dimension is None:
                return {"matches": []}
            params: list[Any] = [words, words]
            where = compile_filter(inputs.where, params)
            params.append(inputs.top_k)
            cursor = conn.execute(
                sql.SQL(
                    "SELECT id, document_id, text, metadata, content_hash,"
                    " ts_rank_cd(tsv, to_tsquery('english', %s)) AS rank FROM {}"
                    " WHERE tsv @@ to_tsquery('english', %s) AND "
                ).format(self.table)
                + sql.SQL(where)
                + sql.SQL(" ORDER BY rank DESC, id LIMIT %s"),
                params,
            )
            rows = cursor.fetchall()
        return {"matches": [match(*r[:5], distance=-float(r[5]), score=float(r[5])) for r in rows]}

    def get(self, inputs: GetInput) -> dict[str, Any]:
        with self._read() as conn:
            self._load(conn)
            if self.dimension is None:
                return {"chunks": []}
            cursor = conn.execute(
                sql.SQL(
                    "SELECT id, document_id, text, content_hash, metadata, embedding::text"
                    " FROM {} WHERE id = ANY(%s)"
                ).format(self.table),
                (inputs.ids,),
            )
            rows = cursor.fetchall()
        found = {}
        for r in rows:
            chunk = {
                "id": r[0],
                "document_id": r[1],
                "text": r[2],
                "content_hash": r[3],
                "metadata": r[4],
            }
            if inputs.include_vectors:
                chunk["vector"] = _floats(r[5])
            found[r[0]] = chunk
        return {"chunks": [found[i] for i in dict.fromkeys(inputs.ids) if i in found]}

    def documents(self, inputs: DocumentsInput) -> dict[str, Any]:
        with self._read() as conn:
            self._load(conn)
            if self.dimension is None:
                return {"documents": []}
            cursor = conn.execute(
                sql.SQL(
                    "SELECT document_id, count(*),"
                    " array_remove(array_agg(DISTINCT content_hash), NULL)"
                    " FROM {} WHERE document_id = ANY(%s) GROUP BY document_id"
                ).format(self.table),
                (inputs.document_ids,),
            )
            rows = cursor.fetchall()
        found = {
            r[0]: {"document_id": r[0], "chunks": int(r[1]), "content_hashes": sorted(r[2])}
            for r in rows
        }
        return {"documents": [found[d] for d in dict.fromkeys(inputs.document_ids) if d in found]}


def create(attributes: PgVectorAttributes) -> PgVectorStore:
    return PgVectorStore.open(attributes)
