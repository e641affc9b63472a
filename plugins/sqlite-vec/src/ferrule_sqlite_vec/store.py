"""The `sqlite_vec_store` component: `ferrule_kit.embeddings.vectors`' contract on one SQLite file.

Layout, per collection ``C`` (a checked identifier):

- ``C__chunks``: one row per chunk (id, document id, text, content hash, metadata as JSON
  text, the vector as a float32 blob and its squared norm); indexed by id and document.
- ``C__fts``: an FTS5 index of the chunks' text (porter stemming, diacritics folded), kept
  by triggers, for ``keyword_search`` (BM25).
- ``ferrule_vector_collections``: each collection's dimension, distance and schema version.

Search is exact: sqlite-vec's distance functions over every row that passes the filter,
the ``top_k`` smallest kept. That is what arbitrary JSON metadata filters need (sqlite-vec's
``vec0`` index filters only on columns declared up front), and at 100k chunks it is as
fast as ``vec0`` (`bench/bench_vector_store_choice.py`). The file is in WAL mode: readers
never wait for a writer, every method's writes are one transaction, and a process killed
mid-write leaves the last committed state.
"""

from __future__ import annotations

import array
import json
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ferrule_kernel import get_logger
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
from ferrule_kit.stores.storage import resolve_store_file

from .attributes import SqliteVecAttributes
from .plugin import COMPONENT_TYPE
from .sql import compile_filter

log = get_logger("ferrule.sqlite_vec")

SCHEMA_VERSION = 1
_WORD = re.compile(r"\w+", re.UNICODE)


def _blob(vector: list[float]) -> bytes:
    return array.array("f", vector).tobytes()


def _floats(blob: bytes) -> list[float]:
    values = array.array("f")
    values.frombytes(blob)
    return values.tolist()


def _norm2(vector: list[float]) -> float:
    return sum(x * x for x in vector)


def fts_query(text: str) -> str:
    """A user's words as an FTS5 query: each word quoted (so ``AND``, ``-``, ``*`` and quotes
    are words, never syntax), any of them matching, BM25 ranking the rest."""
    words = dict.fromkeys(w.lower() for w in _WORD.findall(text))
    return " OR ".join(f'"{w}"' for w in words)


class SqliteVecStore:
    def __init__(self, attributes: SqliteVecAttributes) -> None:
        self.attributes = attributes
        if attributes.path is not None:
            self.path = attributes.path
        else:
            file = resolve_store_file(attributes.db_file, "$.db_file")
            file.parent.mkdir(parents=True, exist_ok=True)  # the storage directory, at first use
            self.path = str(file)
        self.collection = attributes.collection
        self.chunks = f"{self.collection}__chunks"
        self.fts = f"{self.collection}__fts"
        self._lock = threading.Lock()
        self.db = self._open()
        self.dimension: int | None = None
        self.distance: str = attributes.distance
        self._load_collection()
        if attributes.dimension is not None:
            self.ensure_collection(EnsureCollectionInput(attributes.dimension, attributes.distance))

    # -- connection ----------------------------------------------------------------------

    def _unavailable(self, exc: BaseException, what: str) -> VectorStoreUnavailableError:
        return VectorStoreUnavailableError(
            f"{COMPONENT_TYPE}: {what} {self.path!r}: {type(exc).__name__}: {exc}",
            store=COMPONENT_TYPE,
            collection=self.collection,
            path=self.path,
            reason=str(exc),
        )

    def _open(self) -> Any:
        import apsw
        import sqlite_vec

        try:
            db = apsw.Connection(self.path)
            db.set_busy_timeout(self.attributes.busy_timeout_ms)
            db.enable_load_extension(True)
            db.load_extension(sqlite_vec.loadable_path())
            db.enable_load_extension(False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS ferrule_vector_collections ("
                " name TEXT PRIMARY KEY, dimension INTEGER NOT NULL, distance TEXT NOT NULL,"
                " schema_version INTEGER NOT NULL)"
            )
        except apsw.Error as exc:
            raise self._unavailable(exc, "cannot open") from None
        return db

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """The file failing under a method (locked past the busy timeout, full, corrupt,
        unreadable) is one typed error naming the store, not an apsw traceback."""
        import apsw

        try:
            yield
        except (apsw.BusyError, apsw.IOError, apsw.FullError, apsw.CorruptError) as exc:
            raise self._unavailable(exc, "cannot use") from None

    @contextmanager
    def _read(self) -> Iterator[None]:
        with self._lock, self._errors():
            yield

    @contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction, holding SQLite's write lock from its start (``BEGIN
        IMMEDIATE``): what it reads first (does the collection exist?) cannot change
        under it, even from another process."""
        with self._lock, self._errors():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def _load_collection(self) -> None:
        if self.dimension is not None:
            return  # a collection's dimension and distance never change once made
        row = self.db.execute(
            "SELECT dimension, distance FROM ferrule_vector_collections WHERE name = ?",
            (self.collection,),
        ).fetchone()
        if row is not None:
            self.dimension, self.distance = int(row[0]), str(row[1])

    def _create(self, dimension: int, distance: str) -> None:
        c, f = self.chunks, self.fts
        self.db.execute(
            f"""
            CREATE TABLE {c} (
                rowid INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                document_id TEXT,
                text TEXT NOT NULL,
                content_hash TEXT,
                metadata TEXT NOT NULL,
                embedding BLOB NOT NULL,
                norm2 REAL NOT NULL
            );
            CREATE INDEX {c}_document ON {c}(document_id);
            CREATE VIRTUAL TABLE {f} USING fts5(
                text, content='{c}', content_rowid='rowid',
                tokenize='porter unicode61 remove_diacritics 2'
            );
            CREATE TRIGGER {c}_ai AFTER INSERT ON {c} BEGIN
                INSERT INTO {f}(rowid, text) VALUES (new.rowid, new.text);
            END;
            CREATE TRIGGER {c}_ad AFTER DELETE ON {c} BEGIN
                INSERT INTO {f}({f}, rowid, text) VALUES ('delete', old.rowid, old.text);
            END;
            CREATE TRIGGER {c}_au AFTER UPDATE OF text ON {c} BEGIN
                INSERT INTO {f}({f}, rowid, text) VALUES ('delete', old.rowid, old.text);
                INSERT INTO {f}(rowid, text) VALUES (new.rowid, new.text);
            END;
            INSERT INTO ferrule_vector_collections VALUES ('{self.collection}', {dimension},
                '{distance}', {SCHEMA_VERSION});
            """
        )
        self.dimension, self.distance = dimension, distance
        log.debug("collection_created", collection=self.collection, dimension=dimension)

    # -- methods ---------------------------------------------------------------------------

    def info(self, inputs: InfoInput | None = None) -> dict[str, Any]:
        with self._read():
            self._load_collection()
            exists = self.dimension is not None
            count = self._count(None) if exists else 0
        return {
            "collection": self.collection,
            "exists": exists,
            "dimension": self.dimension,
            "distance": self.distance,
            "count": count,
            "keyword_search": True,
        }

    def ensure_collection(self, inputs: EnsureCollectionInput) -> dict[str, Any]:
        with self._write():
            self._load_collection()  # another process may have made it meanwhile
            if self.dimension is None:
                self._create(inputs.dimension, inputs.distance)
            else:
                check_collection(
                    self.collection,
                    (self.dimension, self.distance),
                    (inputs.dimension, inputs.distance),
                )
        return self.info()

    def _rows(self, chunks: Iterable[Chunk]) -> Iterable[tuple[Any, ...]]:
        for chunk in chunks:
            yield (
                chunk.id,
                chunk.document_id,
                chunk.text,
                chunk.content_hash,
                json.dumps(chunk.metadata, ensure_ascii=False),
                _blob(chunk.vector),
                _norm2(chunk.vector),
            )

    def _insert(self, chunks: list[Chunk]) -> None:
        self.db.executemany(
            f"""INSERT INTO {self.chunks}
                (id, document_id, text, content_hash, metadata, embedding, norm2)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET document_id = excluded.document_id,
                    text = excluded.text, content_hash = excluded.content_hash,
                    metadata = excluded.metadata, embedding = excluded.embedding,
                    norm2 = excluded.norm2""",
            self._rows(chunks),
        )

    def _ready_for(self, chunks: list[Chunk]) -> None:
        """Inside the write transaction: refuse a wrong dimension before any write, and
        create the collection on first use."""
        self._load_collection()
        dimension = check_dimension(chunks, self.dimension, self.collection)
        if self.dimension is None and dimension is not None:
            self._create(dimension, self.attributes.distance)

    def upsert(self, inputs: UpsertInput) -> dict[str, Any]:
        with self._write():
            self._ready_for(inputs.chunks)
            if inputs.chunks:
                self._insert(inputs.chunks)
        return {"upserted": len(inputs.chunks)}

    def replace_documents(self, inputs: ReplaceDocumentsInput) -> dict[str, Any]:
        with self._write():  # one transaction: the old version or the new one
            self._ready_for(inputs.chunks)
            if self.dimension is None:  # nothing stored, nothing to insert
                return {"deleted": 0, "inserted": 0}
            self.db.execute(
                f"DELETE FROM {self.chunks} WHERE document_id IN (SELECT value FROM json_each(?))",
                (json.dumps(inputs.all_document_ids()),),
            )
            deleted = self.db.changes()  # the DELETE's own rows (not the FTS triggers')
            if inputs.chunks:
                self._insert(inputs.chunks)
        return {"deleted": deleted, "inserted": len(inputs.chunks)}

    def delete(self, inputs: DeleteInput) -> dict[str, Any]:
        params: list[Any] = []
        if inputs.ids is not None:
            where = "id IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(inputs.ids))
        elif inputs.document_ids is not None:
            where = "document_id IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(inputs.document_ids))
        else:
            where = compile_filter(inputs.where, "metadata", params)
        with self._write():
            self._load_collection()
            if self.dimension is None:
                return {"deleted": 0}
            self.db.execute(f"DELETE FROM {self.chunks} WHERE {where}", params)
            return {"deleted": self.db.changes()}

    def _count(self, node: Any) -> int:
        params: list[Any] = []
        where = compile_filter(node, "metadata", params)
        return int(
            self.db.execute(f"SELECT count(*) FROM {self.chunks} WHERE {where}", params).fetchone()[
                0
            ]
        )

    def count(self, inputs: CountInput) -> dict[str, Any]:
        with self._read():
            self._load_collection()
            return {"count": self._count(inputs.where) if self.dimension is not None else 0}

    def _distance_sql(self, vector: list[float]) -> tuple[str, list[Any]]:
        query = _blob(vector)
        if self.distance == "cosine":
            return "vec_distance_cosine(embedding, ?)", [query]
        if self.distance == "l2":
            return "vec_distance_l2(embedding, ?)", [query]
        # sqlite-vec has no inner product: -a.b = (|a-b|^2 - |a|^2 - |b|^2) / 2
        return (
            "(vec_distance_l2(embedding, ?) * vec_distance_l2(embedding, ?) - norm2 - ?) / 2",
            [query, query, _norm2(vector)],
        )

    def search(self, inputs: SearchInput) -> dict[str, Any]:
        with self._read():
            self._load_collection()
            if self.dimension is None:
                return {"matches": []}
            check_query_dimension(inputs.vector, self.dimension, self.collection)
            distance, params = self._distance_sql(inputs.vector)
            where = compile_filter(inputs.where, "metadata", params)
            params.append(inputs.top_k)
            rows = self.db.execute(
                f"""SELECT id, document_id, text, metadata, content_hash, {distance} AS d
                    FROM {self.chunks} WHERE {where}
                    ORDER BY d, rowid LIMIT ?""",
                params,
            ).fetchall()
        metric = self.distance
        return {
            "matches": [
                match(
                    r[0],
                    r[1],
                    r[2],
                    json.loads(r[3]),
                    r[4],
                    distance=r[5],
                    score=score(metric, r[5]),
                )
                for r in rows
            ]
        }

    def keyword_search(self, inputs: KeywordSearchInput) -> dict[str, Any]:
        query = fts_query(inputs.query)
        if not query:  # only punctuation: no word to look for
            return {"matches": []}
        params: list[Any] = [query]
        where = compile_filter(inputs.where, "c.metadata", params)
        params.append(inputs.top_k)
        with self._read():
            self._load_collection()
            if self.dimension is None:
                return {"matches": []}
            rows = self.db.execute(
                f"""SELECT c.id, c.document_id, c.text, c.metadata, c.content_hash,
                        bm25({self.fts}) AS rank
                    FROM {self.fts} JOIN {self.chunks} AS c ON c.rowid = {self.fts}.rowid
                    WHERE {self.fts} MATCH ? AND {where}
                    ORDER BY rank, c.rowid LIMIT ?""",
                params,
            ).fetchall()
        return {
            "matches": [
                match(r[0], r[1], r[2], json.loads(r[3]), r[4], distance=r[5], score=-r[5])
                for r in rows
            ]
        }

    def get(self, inputs: GetInput) -> dict[str, Any]:
        with self._read():
            self._load_collection()
            if self.dimension is None:
                return {"chunks": []}
            rows = self.db.execute(
                f"""SELECT id, document_id, text, content_hash, metadata, embedding
                    FROM {self.chunks} WHERE id IN (SELECT value FROM json_each(?))""",
                (json.dumps(inputs.ids),),
            ).fetchall()
        found = {}
        for r in rows:
            chunk = {
                "id": r[0],
                "document_id": r[1],
                "text": r[2],
                "content_hash": r[3],
                "metadata": json.loads(r[4]),
            }
            if inputs.include_vectors:
                chunk["vector"] = _floats(r[5])
            found[r[0]] = chunk
        return {"chunks": [found[i] for i in dict.fromkeys(inputs.ids) if i in found]}

    def documents(self, inputs: DocumentsInput) -> dict[str, Any]:
        with self._read():
            self._load_collection()
            if self.dimension is None:
                return {"documents": []}
            rows = self.db.execute(
                f"""SELECT document_id, count(*), json_group_array(DISTINCT content_hash)
                    FROM {self.chunks}
                    WHERE document_id IN (SELECT value FROM json_each(?))
                    GROUP BY document_id""",
                (json.dumps(inputs.document_ids),),
            ).fetchall()
        found = {
            r[0]: {
                "document_id": r[0],
                "chunks": int(r[1]),
                "content_hashes": sorted(h for h in json.loads(r[2]) if h is not None),
            }
            for r in rows
        }
        return {"documents": [found[d] for d in dict.fromkeys(inputs.document_ids) if d in found]}


def create(attributes: SqliteVecAttributes) -> SqliteVecStore:
    return SqliteVecStore(attributes)
