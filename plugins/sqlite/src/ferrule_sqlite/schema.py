"""The schema and its migrations.

``ferrule_schema`` has one row per migration applied; the store's version is the highest.
`migrate` applies the missing ones in order, in the one write transaction that opens the
store, so a store is always at a version it has a row for, and a second process opening
it at the same time waits and then finds nothing to do. A migration is a function of the
connection, never edited once released: a change of schema is a new migration.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable

import attrs
from ferrule_kit.errors import StorageSchemaError
from ferrule_kit.sqlrows import dump_json


@attrs.frozen
class Migration:
    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


def _v1(conn: sqlite3.Connection) -> None:
    for statement in (
        """CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            user_id TEXT,
            agent_id TEXT,
            name TEXT,
            session_state TEXT NOT NULL,
            summary TEXT,
            metadata TEXT NOT NULL,
            run_count INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )""",
        "CREATE INDEX sessions_by_user ON sessions (user_id, updated_at)",
        "CREATE INDEX sessions_by_update ON sessions (updated_at)",
        # id orders a session's runs; run_id is the caller's
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
            user_id TEXT,
            agent_id TEXT,
            status TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )""",
        "CREATE INDEX runs_by_session ON runs (session_id, id)",
        """CREATE TABLE memories (
            memory_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT,
            memory TEXT NOT NULL,
            topics TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )""",
        "CREATE INDEX memories_by_user ON memories (user_id, created_at)",
    ):
        conn.execute(statement)


def _v2(conn: sqlite3.Connection) -> None:
    # A history load reads a window of messages; version 1 kept them inside the payload, so
    # each load parsed whole runs (tool results, metrics). They move to a column of their
    # own, and the window's index covers the status filter so skipped runs cost no row read.
    conn.execute("ALTER TABLE runs ADD COLUMN messages TEXT NOT NULL DEFAULT '[]'")
    # In Python, not with SQLite's JSON functions: those re-serialize what they move.
    last = 0
    while True:
        rows = conn.execute(
            "SELECT id, payload FROM runs WHERE id > ? ORDER BY id LIMIT 500", (last,)
        ).fetchall()
        if not rows:
            break
        for row_id, payload in rows:
            data = json.loads(payload)
            messages = data.pop("messages", [])
            conn.execute(
                "UPDATE runs SET payload = ?, messages = ? WHERE id = ?",
                (dump_json(data, "$.run"), dump_json(messages, "$.run.messages"), row_id),
            )
        last = rows[-1][0]
    conn.execute("DROP INDEX runs_by_session")
    conn.execute("CREATE INDEX runs_window ON runs (session_id, id, status)")


def _v3(conn: sqlite3.Connection) -> None:
    # Writers of a session's state compare-and-set it (ferrule_kit.sqlstore): a stored
    # state starts at version 0, as if never written.
    conn.execute("ALTER TABLE sessions ADD COLUMN state_version INTEGER NOT NULL DEFAULT 0")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "sessions, runs and user memories", _v1),
    Migration(2, "run messages in a column of their own; covering history-window index", _v2),
    Migration(3, "a version of each session's state, for compare-and-set writes", _v3),
)
LATEST = MIGRATIONS[-1].version


def current_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT max(version) FROM ferrule_schema").fetchone()
    return row[0] or 0


def migrate(conn: sqlite3.Connection, store: str, target: int = LATEST) -> int:
    """Bring the store to ``target`` inside the caller's write transaction; the version."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS ferrule_schema ("
        "version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL)"
    )
    version = current_version(conn)
    if version > LATEST:
        raise StorageSchemaError(
            f"the store {store} has schema version {version}, newer than this ferrule-sqlite "
            f"knows ({LATEST}): upgrade ferrule-sqlite",
            backend="sqlite",
            store=store,
            version=version,
            latest=LATEST,
        )
    for migration in MIGRATIONS:
        if version < migration.version <= target:
            try:
                migration.apply(conn)
            except sqlite3.OperationalError as exc:
                # e.g. a "sessions" table of another program in the same file
                raise StorageSchemaError(
                    f"cannot migrate the store {store} to schema version "
                    f"{migration.version}: {exc}; is it a ferrule store?",
                    backend="sqlite",
                    store=store,
                ) from None
            conn.execute(
                "INSERT INTO ferrule_schema (version, description, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.description, time.time()),
            )
            version = migration.version
    return version
