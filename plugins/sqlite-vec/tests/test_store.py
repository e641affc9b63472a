"""ferrule-sqlite-vec beyond the shared suite: a file that cannot be opened, data that
outlives the component and its process (a SIGKILL mid-insert included), keyword queries
that cannot break FTS5, and what a network client may not choose."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from ferrule import Runtime
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kernel.trust import validating
from ferrule_kit.embeddings.vectors import (
    KeywordSearchInput,
    UpsertInput,
    VectorStoreUnavailableError,
)
from ferrule_sqlite_vec import plugin
from ferrule_sqlite_vec.attributes import DEFAULT_FILE, SqliteVecAttributes
from ferrule_sqlite_vec.store import SqliteVecStore, fts_query
from hypothesis import given, settings
from hypothesis import strategies as st


def attributes(**fields: object) -> SqliteVecAttributes:
    """Attributes made by code in this process (a trusted caller may name a file)."""
    with validating(True):
        return SqliteVecAttributes(**fields)  # type: ignore[arg-type]


def test_a_file_that_cannot_be_opened_gives_one_typed_error(tmp_path: Path) -> None:
    with pytest.raises(VectorStoreUnavailableError) as error:
        SqliteVecStore(attributes(path=str(tmp_path / "no" / "such" / "dir.db")))
    assert error.value.details["store"] == "sqlite_vec_store"
    not_a_db = tmp_path / "junk.db"
    not_a_db.write_bytes(b"this is not a database file at all" * 100)
    with pytest.raises(VectorStoreUnavailableError, match=r"junk\.db"):
        SqliteVecStore(attributes(path=str(not_a_db)))


def test_data_outlives_the_component(tmp_path: Path) -> None:
    path = str(tmp_path / "kb.db")
    chunk = {"id": "a", "vector": [1.0, 0.0], "text": "kept", "metadata": {"k": 1}}
    with Runtime() as rt:
        rt.define("sqlite_vec_store", "kb", {"path": path, "collection": "docs"})
        rt.call_method("kb", "upsert", {"chunks": [chunk]})
        rt.delete("kb")
        rt.define("local_vector_store", "again", {"path": path, "collection": "docs"})
        info = rt.call_method("again", "info", {})
        found = rt.call_method("again", "keyword_search", {"query": "kept"})
    assert (info["count"], info["dimension"]) == (1, 2)
    assert [m["id"] for m in found["matches"]] == ["a"]


WRITER = """
import sys
from ferrule_kernel.trust import validating
from ferrule_kit.embeddings.vectors import UpsertInput, Chunk
from ferrule_sqlite_vec.attributes import SqliteVecAttributes
from ferrule_sqlite_vec.store import SqliteVecStore

with validating(True):
    attributes = SqliteVecAttributes(path=sys.argv[1], collection="docs", dimension=64)
store = SqliteVecStore(attributes)
batch = 0
while True:
    chunks = [Chunk(id=f"b{batch}-{i}", vector=[float(i)] * 64, text="x " * 50) for i in range(200)]
    store.upsert(UpsertInput(chunks))
    batch += 1
    print(batch, flush=True)
"""


def test_sigkill_mid_insert_loses_no_committed_batch(tmp_path: Path) -> None:
    path = str(tmp_path / "kb.db")
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), path],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None
        committed = 0
        deadline = time.monotonic() + 60
        while committed < 5 and time.monotonic() < deadline:
            committed = int(writer.stdout.readline())
        time.sleep(0.05)  # into the middle of a later batch
        os.kill(writer.pid, signal.SIGKILL)
    finally:
        writer.wait()
    store = SqliteVecStore(attributes(path=path, collection="docs"))
    count = store.info()["count"]
    assert count >= committed * 200, "every batch reported committed is there"
    assert count % 200 == 0, "no half batch: each upsert is one transaction"
    store.upsert(UpsertInput([]))  # and the file is usable
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store.close()


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=60))
def test_any_text_is_a_valid_keyword_query(text: str) -> None:
    store = _memory_store()
    if not text.strip():
        return
    # never an FTS5 syntax error, whatever quotes, operators or symbols the text holds
    store.keyword_search(KeywordSearchInput(text))
    assert '"' not in fts_query(text).replace('" OR "', "").strip('"')


_STORE: list[SqliteVecStore] = []


def _memory_store() -> SqliteVecStore:
    if not _STORE:
        store = SqliteVecStore(attributes(path=":memory:", dimension=2))
        from ferrule_kit.embeddings.vectors import Chunk

        store.upsert(UpsertInput([Chunk(id="a", vector=[1.0, 0.0], text='He said "AND" NEAR x*')]))
        _STORE.append(store)
    return _STORE[0]


async def test_a_network_client_may_not_name_the_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FERRULE_STORAGE_DIR", str(tmp_path / "storage"))
    kernel = Kernel(plugins=[plugin], load_entry_points=False)
    with pytest.raises(InvalidInputError) as error:
        await kernel.define("sqlite_vec_store", "kb", {"path": "/etc/passwd"}, trusted=False)
    assert error.value.errors[0]["path"] == "$.path"
    try:
        await kernel.define("sqlite_vec_store", "kb", {"collection": "remote"}, trusted=False)
        assert (tmp_path / "storage" / DEFAULT_FILE).is_file(), "in the storage directory"
        with pytest.raises(InvalidInputError) as error:
            await kernel.define("sqlite_vec_store", "up", {"db_file": "../up.db"}, trusted=False)
        assert error.value.errors[0]["path"] == "$.db_file"
    finally:
        await kernel.aclose()


def test_two_connections_create_and_fill_one_collection_at_once(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from ferrule_kit.embeddings.vectors import Chunk

    path = str(tmp_path / "kb.db")
    stores = [SqliteVecStore(attributes(path=path, collection="shared")) for _ in range(2)]

    def fill(index: int) -> None:
        store = stores[index]
        for batch in range(10):
            chunks = [
                Chunk(id=f"{index}-{batch}-{i}", vector=[float(index), float(i), 1.0])
                for i in range(50)
            ]
            store.upsert(UpsertInput(chunks))

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(fill, range(2)))
    assert [s.info()["count"] for s in stores] == [1000, 1000]
    for store in stores:
        store.close()


def test_a_writer_locked_out_gets_one_typed_error(tmp_path: Path) -> None:
    import apsw
    from ferrule_kit.embeddings.vectors import Chunk

    path = str(tmp_path / "kb.db")
    store = SqliteVecStore(attributes(path=path, collection="docs", busy_timeout_ms=50))
    holder = apsw.Connection(path)
    holder.execute("BEGIN IMMEDIATE")  # another process holding the write lock
    try:
        with pytest.raises(VectorStoreUnavailableError, match="locked"):
            store.upsert(UpsertInput([Chunk(id="a", vector=[1.0])]))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.upsert(UpsertInput([Chunk(id="a", vector=[1.0])]))  # and works once it is free
    assert store.info()["count"] == 1
    store.close()
