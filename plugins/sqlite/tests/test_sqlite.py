"""ferrule-sqlite beyond the shared contract: the file (WAL, where it may live), migrations,
the history window's index, a process killed inside a transaction, and a store that is down."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ferrule_sqlite.plugin
import pytest
from ferrule import Runtime
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.errors import StorageSchemaError, StorageUnavailableError
from ferrule_kit.network.paths import REMOTE_PATHS_VARIABLE
from ferrule_kit.stores.storage import (
    STORAGE_DIR_ENV,
    AppendRunInput,
    GetMessagesInput,
    GetRunsInput,
    Run,
    converter,
)
from ferrule_sqlite import schema
from ferrule_sqlite.store import SqliteStorage


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The host's storage directory for this test."""
    monkeypatch.setenv(STORAGE_DIR_ENV, str(tmp_path))
    return tmp_path


@pytest.fixture
def rt(root: Path) -> Iterator[Runtime]:
    with Runtime() as runtime:
        yield runtime


def _run(session_id: str, run_id: str, text: str = "hi", **fields: Any) -> dict[str, Any]:
    message = {"role": "user", "content": [{"type": "text", "text": text}]}
    return {"run_id": run_id, "session_id": session_id, "messages": [message], **fields}


def test_the_file_is_in_wal_mode(rt: Runtime, root: Path) -> None:
    rt.define("sqlite_storage", "db", {"db_file": "data/agent.db"})
    rt.call_method("db", "append_run", {"run": _run("s", "r1")})
    with sqlite3.connect(root / "data" / "agent.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("SELECT count(*) FROM runs").fetchone() == (1,)


# -- where a store may live -------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "../x.db",
        "/etc/passwd",
        "a/../../x.db",
        "file:x.db",
        ":memory:",
        ".hidden.db",
        "a//b.db",
        "",
    ],
)
def test_db_file_names_a_file_under_the_storage_directory(rt: Runtime, name: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        rt.define("sqlite_storage", "db", {"db_file": name})
    assert [e["path"] for e in caught.value.errors] == ["$.db_file"]


def test_a_symlink_out_of_the_storage_directory_is_refused(
    rt: Runtime, root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InvalidInputError, match="outside the storage directory"):
        rt.define("sqlite_storage", "db", {"db_file": "escape/x.db"})
    assert list(outside.iterdir()) == []


async def test_a_path_from_the_network_must_lie_under_the_remote_paths(
    root: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = tmp_path_factory.mktemp("allowed")
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "mine.db"
    monkeypatch.setenv(REMOTE_PATHS_VARIABLE, str(allowed))
    kernel = Kernel(plugins=[ferrule_sqlite.plugin], load_entry_points=False)
    with pytest.raises(InvalidInputError) as caught:  # a network client (ferrule serve)
        await kernel.define("sqlite_storage", "remote", {"path": str(elsewhere)})
    assert [e["path"] for e in caught.value.errors] == ["$.path"]
    assert not elsewhere.exists()
    await kernel.define("sqlite_storage", "remote", {"path": str(allowed / "shared.db")})
    await kernel.define("sqlite_storage", "local", {"path": str(elsewhere)}, trusted=True)
    for name in ("remote", "local"):
        await kernel.call_method(name, "append_run", {"run": _run("s", "r")})
    assert elsewhere.exists() and (allowed / "shared.db").exists()
    await kernel.aclose()


# -- migrations ----------------------------------------------------------------------------


def _v1_file(path: Path, runs: list[Run]) -> None:
    """A store as ferrule-sqlite's schema version 1 left it: messages inside the payload."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    assert schema.migrate(conn, str(path), target=1) == 1
    conn.execute(
        "INSERT INTO sessions (session_id, user_id, session_state, metadata, run_count, "
        "created_at, updated_at) VALUES ('s1', 'u1', '{\"k\": [1, 2.5]}', '{}', ?, 1.0, 2.0)",
        (len(runs),),
    )
    for run in runs:
        data = converter.unstructure(run)
        columns = [data.pop(c) for c in ("run_id", "session_id", "user_id", "agent_id", "status")]
        created, updated = data.pop("created_at"), data.pop("updated_at")
        conn.execute(
            "INSERT INTO runs (run_id, session_id, user_id, agent_id, status, payload, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*columns, json.dumps(data), created, updated),
        )
    conn.execute("COMMIT")
    conn.close()


def test_a_version_1_file_is_migrated(rt: Runtime, root: Path) -> None:
    runs = [
        converter.structure(
            {
                **_run("s1", f"r{i}", text=f"q{i} \u00e9\u00e8 \x00"),
                "status": status,
                "metrics": {"latency": 0.1 + i, "tokens": 10**20, "neg": -0.0},
                "tool_calls": [{"tool_call_id": "c", "name": "f", "arguments": {"x": 1e-300}}],
                "created_at": 100.0 + i,
                "updated_at": 100.5 + i,
            },
            Run,
        )
        for i, status in enumerate(["completed", "error", "paused"])
    ]
    _v1_file(root / "old.db", runs)

    rt.define("sqlite_storage", "db", {"db_file": "old.db"})
    assert rt.call_method("db", "schema_version", {}) == {
        "version": 3,
        "latest": 3,
        "backend": "sqlite",
    }
    stored = rt.call_method("db", "get_runs", {"session_id": "s1"})["runs"]
    expected = [converter.unstructure(run) for run in runs]
    assert json.dumps(stored) == json.dumps(expected)  # exactly, floats and all
    messages = rt.call_method(
        "db", "get_messages", {"session_id": "s1", "skip_statuses": ["error"]}
    )
    assert [m["content"][0]["text"] for m in messages["messages"]] == [
        "q0 \u00e9\u00e8 \x00",
        "q2 \u00e9\u00e8 \x00",
    ]
    migrated = rt.call_method("db", "get_session", {"session_id": "s1"})["session"]
    assert migrated["session_state"] == {"k": [1, 2.5]}
    assert migrated["state_version"] == 0  # version 3 adds the column: "never written"
    # and it goes on working as a current store
    rt.call_method("db", "append_run", {"run": _run("s1", "r3")})
    assert rt.call_method("db", "get_session", {"session_id": "s1"})["session"]["run_count"] == 4
    with sqlite3.connect(root / "old.db") as conn:
        versions = conn.execute("SELECT version FROM ferrule_schema ORDER BY version").fetchall()
        indexes = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
    assert versions == [(1,), (2,), (3,)]
    assert "runs_window" in indexes and "runs_by_session" not in indexes


def test_a_version_2_file_is_migrated(rt: Runtime, root: Path) -> None:
    conn = sqlite3.connect(root / "v2.db", isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    assert schema.migrate(conn, "v2.db", target=2) == 2
    conn.execute(
        "INSERT INTO sessions (session_id, session_state, metadata, created_at, updated_at) "
        "VALUES ('s1', '{\"k\": 1}', '{}', 1.0, 2.0)"
    )
    conn.execute("COMMIT")
    columns = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
    conn.close()
    assert "state_version" not in columns  # version 3's column

    rt.define("sqlite_storage", "db", {"db_file": "v2.db"})
    assert rt.call_method("db", "schema_version", {})["version"] == 3
    session = rt.call_method("db", "get_session", {"session_id": "s1"})["session"]
    assert session["session_state"] == {"k": 1} and session["state_version"] == 0
    updated = rt.call_method(
        "db",
        "update_session_state",
        {"session_id": "s1", "updates": {"k": 2}, "state_version": 0},
    )
    assert updated["session"]["state_version"] == 1
    with sqlite3.connect(root / "v2.db") as conn:
        versions = conn.execute("SELECT version FROM ferrule_schema ORDER BY version").fetchall()
    assert versions == [(1,), (2,), (3,)]


def test_a_newer_schema_is_refused(rt: Runtime, root: Path) -> None:
    rt.define("sqlite_storage", "db", {"db_file": "new.db"})
    rt.delete("db")
    with sqlite3.connect(root / "new.db") as conn:
        conn.execute("INSERT INTO ferrule_schema VALUES (99, 'from the future', 0)")
    with pytest.raises(StorageSchemaError) as caught:
        rt.define("sqlite_storage", "db", {"db_file": "new.db"})
    assert caught.value.kind == "storage_schema"
    assert (
        caught.value.details["version"] == 99 and "upgrade ferrule-sqlite" in caught.value.message
    )


def test_a_file_of_another_program_is_refused(rt: Runtime, root: Path) -> None:
    with sqlite3.connect(root / "theirs.db") as conn:
        conn.execute("CREATE TABLE sessions (x)")
    with pytest.raises(StorageSchemaError, match="is it a ferrule store"):
        rt.define("sqlite_storage", "db", {"db_file": "theirs.db"})
    with sqlite3.connect(root / "theirs.db") as conn:  # left as it was
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    assert tables == {"sessions"}


# -- the history window --------------------------------------------------------------------


def test_history_queries_read_the_window_through_its_index(root: Path) -> None:
    store = SqliteStorage(root / "plan.db", pool_size=1)
    for session in ("a", "b"):
        for i in range(50):
            store.append_run(
                converter.structure({"run": _run(session, f"{session}{i}")}, AppendRunInput)
            )
    statements: list[str] = []
    with store._pool.connection() as conn:
        conn.set_trace_callback(statements.append)
    store.get_messages(GetMessagesInput("a", last_n_runs=3, skip_statuses=["error"]))
    store.get_messages(GetMessagesInput("a", limit=5))
    store.get_runs(GetRunsInput("a", last_n_runs=3, skip_statuses=["paused"]))
    queries = [s for s in statements if s.startswith("SELECT") and "FROM runs" in s]
    assert len(queries) == 3
    with store._pool.connection() as conn:
        conn.set_trace_callback(None)
        for query in queries:
            plan = " / ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}"))
            assert "runs_window" in plan, (query, plan)
            assert "TEMP B-TREE" not in plan and "SCAN runs" not in plan, (query, plan)
    store.close()


# -- faults --------------------------------------------------------------------------------

_HOLDER = r"""
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE sessions SET run_count = run_count + 1 WHERE session_id = 's'")
conn.execute(
    "INSERT INTO runs (run_id, session_id, status, payload, messages, created_at, updated_at) "
    "VALUES ('half', 's', 'running', '{}', '[]', 0, 0)"
)
print("in transaction", flush=True)
time.sleep(60)
"""


def test_a_process_killed_inside_a_transaction_leaves_the_store_usable(
    rt: Runtime, root: Path
) -> None:
    rt.define("sqlite_storage", "db", {"db_file": "kill.db"})
    rt.call_method("db", "append_run", {"run": _run("s", "r1")})
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(root / "kill.db")], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "in transaction"
    holder.send_signal(signal.SIGKILL)
    holder.wait(30)

    started = time.monotonic()
    rt.call_method("db", "append_run", {"run": _run("s", "r2")})
    assert time.monotonic() - started < 5  # no lock outlived the process
    runs = rt.call_method("db", "get_runs", {"session_id": "s"})["runs"]
    assert [r["run_id"] for r in runs] == ["r1", "r2"]
    assert rt.call_method("db", "get_session", {"session_id": "s"})["session"]["run_count"] == 2
    with sqlite3.connect(root / "kill.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_store_that_cannot_be_opened_is_unavailable(rt: Runtime, root: Path) -> None:
    (root / "blocker").write_text("a file, not a folder")
    with pytest.raises(StorageUnavailableError) as caught:
        rt.define("sqlite_storage", "db", {"db_file": "blocker/x.db"})
    assert caught.value.kind == "storage_unavailable"
    assert caught.value.details["backend"] == "sqlite"
    assert caught.value.details["store"] == str(root / "blocker" / "x.db")
    assert str(root / "blocker" / "x.db") in caught.value.message

    (root / "junk.db").write_bytes(b"not sqlite at all " * 512)
    with pytest.raises(StorageUnavailableError, match="not a database"):
        rt.define("sqlite_storage", "db", {"db_file": "junk.db"})


def test_a_store_locked_past_the_busy_timeout_is_unavailable(rt: Runtime, root: Path) -> None:
    rt.define("sqlite_storage", "db", {"db_file": "busy.db", "busy_timeout": 0.2})
    holder = sqlite3.connect(root / "busy.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StorageUnavailableError, match="locked") as caught:
            rt.call_method("db", "append_run", {"run": _run("s", "r1")})
        assert caught.value.details["reason"] == "database is locked"
        # readers are not blocked by a writer (WAL)
        assert rt.call_method("db", "get_session", {"session_id": "s"}) == {"session": None}
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    rt.call_method("db", "append_run", {"run": _run("s", "r1")})
    assert rt.call_method("db", "get_session", {"session_id": "s"})["session"]["run_count"] == 1


def test_threads_share_one_component(rt: Runtime) -> None:
    """Sync callers run the methods in their own threads: the pool keeps each connection to
    one thread at a time."""
    rt.define("sqlite_storage", "db", {"db_file": "threads.db", "pool_size": 2})
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            for turn in range(10):
                rt.call_method("db", "append_run", {"run": _run(f"s{index}", f"r{index}-{turn}")})
                rt.call_method("db", "get_messages", {"session_id": f"s{index}", "limit": 3})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    sessions = rt.call_method("db", "list_sessions", {})["sessions"]
    assert sorted(s["run_count"] for s in sessions) == [10] * 12
