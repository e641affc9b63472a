"""ferrule-postgres beyond the shared contract: the throwaway server itself, migrations, the
connection string's secrecy, a client killed inside a transaction, and a server that is
down or goes down."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import ferrule_postgres.plugin
import psycopg
import pytest
from ferrule import Runtime
from ferrule_kernel import InvalidInputError, Kernel, configure_logging
from ferrule_kernel.trust import validating
from ferrule_kit.errors import StorageSchemaError, StorageUnavailableError
from ferrule_kit.stores.storage import Run, converter
from ferrule_kit.testing.postgres import PostgresServer, start_postgres
from ferrule_postgres import schema
from ferrule_postgres.attributes import DSN_ENV, PostgresStorageAttributes

PASSWORD = "s3cret-Pa55"


@pytest.fixture
def rt(postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    monkeypatch.setenv(DSN_ENV, postgres_dsn)
    with Runtime() as runtime:
        yield runtime


def _run(session_id: str, run_id: str, text: str = "hi", **fields: Any) -> dict[str, Any]:
    message = {"role": "user", "content": [{"type": "text", "text": text}]}
    return {"run_id": run_id, "session_id": session_id, "messages": [message], **fields}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the throwaway server ------------------------------------------------------------------


def test_the_test_server_is_postgres_with_pgvector(postgres_server: PostgresServer) -> None:
    assert postgres_server.version.startswith("postgres (PostgreSQL)")
    assert {"vector", "pg_trgm"} <= postgres_server.extensions
    with psycopg.connect(postgres_server.create_database(), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        row = conn.execute("SELECT '[1, 2, 3]'::vector <-> '[1, 2, 5]'::vector").fetchone()
    assert row == (2.0,)


@pytest.mark.skipif(os.geteuid() != 0, reason="the copy is what a root user runs")
def test_the_test_server_runs_under_root_from_a_copy() -> None:
    server = start_postgres(copy=True)
    try:
        assert server.bin_dir.is_relative_to(server.base)
        with psycopg.connect(server.dsn()) as conn:
            user = conn.execute("SELECT usename FROM pg_user WHERE usesuper").fetchone()
        assert user == ("postgres",)
    finally:
        server.stop()
    assert not server.running and not server.base.exists()


# -- migrations ----------------------------------------------------------------------------


async def test_a_version_1_schema_is_migrated(
    postgres_dsn: str, schema_name: str, rt: Runtime
) -> None:
    runs = [
        converter.structure(
            {
                **_run("s1", f"r{i}", text=f"q{i} \u00e9 \x00"),
                "status": status,
                "metrics": {"latency": 0.1 + i, "tokens": 10**20, "neg": -0.0},
                "created_at": 100.0 + i,
                "updated_at": 100.5 + i,
            },
            Run,
        )
        for i, status in enumerate(["completed", "error", "paused"])
    ]
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as conn:
        assert await schema.migrate(conn, schema_name, "test", target=1) == 1
        await conn.execute(
            f"INSERT INTO {schema_name}.sessions (session_id, session_state, metadata, run_count, "
            "created_at, updated_at) VALUES ('s1', '{\"k\": [1, 2.5]}', '{}', 3, 1, 2)"
        )
        for run in runs:
            data = converter.unstructure(run)
            columns = [
                data.pop(c) for c in ("run_id", "session_id", "user_id", "agent_id", "status")
            ]
            created, updated = data.pop("created_at"), data.pop("updated_at")
            await conn.execute(
                f"INSERT INTO {schema_name}.runs (run_id, session_id, user_id, agent_id, status, "
                "payload, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (*columns, json.dumps(data), created, updated),
            )

    rt.define("postgres_storage", "db", {"schema": schema_name})
    assert rt.call_method("db", "schema_version", {})["version"] == 3
    migrated = rt.call_method("db", "get_session", {"session_id": "s1"})["session"]
    assert migrated["session_state"] == {"k": [1, 2.5]} and migrated["state_version"] == 0
    stored = rt.call_method("db", "get_runs", {"session_id": "s1"})["runs"]
    assert json.dumps(stored) == json.dumps([converter.unstructure(r) for r in runs])
    window = rt.call_method("db", "get_messages", {"session_id": "s1", "last_n_runs": 1})
    assert window["messages"][0]["content"][0]["text"] == "q2 \u00e9 \x00"
    rt.call_method("db", "append_run", {"run": _run("s1", "r3")})
    assert rt.call_method("db", "get_session", {"session_id": "s1"})["session"]["run_count"] == 4


async def test_a_version_2_schema_is_migrated(
    postgres_dsn: str, schema_name: str, rt: Runtime
) -> None:
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as conn:
        assert await schema.migrate(conn, schema_name, "test", target=2) == 2
        await conn.execute(
            f"INSERT INTO {schema_name}.sessions (session_id, session_state, metadata, "
            "created_at, updated_at) VALUES ('s1', '{\"k\": 1}', '{}', 1, 2)"
        )
        cursor = await conn.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = %s AND table_name = 'sessions'",
            (schema_name,),
        )
        columns = {row[0] for row in await cursor.fetchall()}
    assert "state_version" not in columns  # version 3's column

    rt.define("postgres_storage", "db", {"schema": schema_name})
    assert rt.call_method("db", "schema_version", {})["version"] == 3
    session = rt.call_method("db", "get_session", {"session_id": "s1"})["session"]
    assert session["session_state"] == {"k": 1} and session["state_version"] == 0
    updated = rt.call_method(
        "db", "update_session_state", {"session_id": "s1", "updates": {"k": 2}, "state_version": 0}
    )
    assert updated["session"]["state_version"] == 1
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as conn:
        cursor = await conn.execute(
            f"SELECT version FROM {schema_name}.ferrule_schema ORDER BY version"
        )
        assert await cursor.fetchall() == [(1,), (2,), (3,)]


def test_a_newer_schema_is_refused(postgres_dsn: str, schema_name: str, rt: Runtime) -> None:
    rt.define("postgres_storage", "db", {"schema": schema_name})
    rt.delete("db")
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"INSERT INTO {schema_name}.ferrule_schema VALUES (99, 'future', 0)")
    with pytest.raises(StorageSchemaError) as caught:
        rt.define("postgres_storage", "db", {"schema": schema_name})
    assert caught.value.details["version"] == 99
    assert "upgrade ferrule-postgres" in caught.value.message


def test_a_schema_of_another_program_is_refused(
    postgres_dsn: str, schema_name: str, rt: Runtime
) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema_name}")
        conn.execute(f"CREATE TABLE {schema_name}.sessions (x int)")
    with pytest.raises(StorageSchemaError, match="is it a ferrule store"):
        rt.define("postgres_storage", "db", {"schema": schema_name})


# -- the connection string -----------------------------------------------------------------


async def test_a_dsn_is_taken_from_this_process_only(
    postgres_dsn: str, schema_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DSN_ENV, raising=False)
    kernel = Kernel(plugins=[ferrule_postgres.plugin], load_entry_points=False)
    with pytest.raises(InvalidInputError) as caught:  # a network client (ferrule serve)
        await kernel.define("postgres_storage", "remote", {"dsn": postgres_dsn})
    assert [e["path"] for e in caught.value.errors] == ["$.dsn"]
    with pytest.raises(InvalidInputError, match=DSN_ENV):  # nothing configured
        await kernel.define("postgres_storage", "nothing", {})
    attributes = {"dsn": postgres_dsn, "schema": schema_name}
    await kernel.define("postgres_storage", "local", attributes, trusted=True)
    await kernel.call_method("local", "append_run", {"run": _run("s", "r")})
    await kernel.aclose()


@pytest.mark.parametrize("style", ["url", "keywords"])
async def test_a_server_that_is_down_is_unavailable_and_the_password_never_shows(
    style: str,
) -> None:
    port = _free_port()  # nothing listens there
    dsn = (
        f"postgresql://ferrule:{PASSWORD}@127.0.0.1:{port}/agents"
        if style == "url"
        else f"host=127.0.0.1 port={port} dbname=agents user=ferrule password={PASSWORD}"
    )
    logs = io.StringIO()
    configure_logging(debug=True, stream=logs)
    kernel = Kernel(plugins=[ferrule_postgres.plugin], load_entry_points=False)
    try:
        with pytest.raises(StorageUnavailableError) as caught:
            await kernel.define("postgres_storage", "db", {"dsn": dsn}, trusted=True)
        with pytest.raises(InvalidInputError) as bad:
            await kernel.define("postgres_storage", "db", {"dsn": f"{dsn} 'unclosed"}, trusted=True)
    finally:
        configure_logging(debug=False)
        await kernel.aclose()
    with validating(trusted=True):
        attributes = PostgresStorageAttributes(dsn=dsn)
    error = caught.value
    assert error.kind == "storage_unavailable"
    assert error.details["store"] == f"127.0.0.1:{port}/agents"
    assert f"127.0.0.1:{port}/agents" in error.message and "refused" in error.message
    shown = [
        json.dumps(error.to_dict()),
        json.dumps(bad.value.to_dict()),
        repr(error),
        logs.getvalue(),
        repr(attributes),
    ]
    assert not [text for text in shown if PASSWORD in text]


def test_a_server_that_goes_down_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    server = start_postgres()
    try:
        monkeypatch.setenv(DSN_ENV, server.dsn())
        with Runtime() as rt:
            rt.define("postgres_storage", "db", {"timeout": 1.0})
            rt.call_method("db", "append_run", {"run": _run("s", "r1")})
            server.stop()
            started = time.monotonic()
            with pytest.raises(StorageUnavailableError) as caught:
                rt.call_method("db", "get_runs", {"session_id": "s"})
            assert time.monotonic() - started < 10
            assert caught.value.details["store"] == f"127.0.0.1:{server.port}/postgres"
    finally:
        server.stop()


def test_connections_the_server_dropped_are_replaced(
    postgres_dsn: str, schema_name: str, rt: Runtime
) -> None:
    rt.define("postgres_storage", "db", {"schema": schema_name, "min_size": 2})
    rt.call_method("db", "append_run", {"run": _run("s", "r1")})
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        dropped = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert dropped is not None and dropped[0] >= 1
    for index in range(2, 6):  # no call fails: the pool checks before handing out
        rt.call_method("db", "append_run", {"run": _run("s", f"r{index}")})
    assert rt.call_method("db", "get_session", {"session_id": "s"})["session"]["run_count"] == 5


# -- a client killed inside a transaction -------------------------------------------------

_HOLDER = r"""
import sys, time
import psycopg

dsn, s = sys.argv[1], sys.argv[2]
conn = psycopg.connect(dsn)
conn.execute(f"SELECT 1 FROM {s}.sessions WHERE session_id = 's' FOR UPDATE")
conn.execute(f"UPDATE {s}.sessions SET run_count = run_count + 1 WHERE session_id = 's'")
conn.execute(
    f"INSERT INTO {s}.runs (run_id, session_id, status, payload, messages, created_at, "
    "updated_at) VALUES ('half', 's', 'running', '{}', '[]', 0, 0)"
)
print("in transaction", flush=True)
time.sleep(60)
"""


def test_a_client_killed_inside_a_transaction_leaves_the_store_usable(
    postgres_dsn: str, schema_name: str, rt: Runtime
) -> None:
    rt.define("postgres_storage", "db", {"schema": schema_name})
    rt.call_method("db", "append_run", {"run": _run("s", "r1")})
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, postgres_dsn, schema_name],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "in transaction"
    holder.send_signal(signal.SIGKILL)
    holder.wait(30)

    started = time.monotonic()
    rt.call_method("db", "append_run", {"run": _run("s", "r2")})  # waits for no dead lock holder
    assert time.monotonic() - started < 10
    runs = rt.call_method("db", "get_runs", {"session_id": "s"})["runs"]
    assert [r["run_id"] for r in runs] == ["r1", "r2"]
    assert rt.call_method("db", "get_session", {"session_id": "s"})["session"]["run_count"] == 2
