"""The schema and its migrations: the same design as ferrule-sqlite's.

``ferrule_schema`` (in the component's PostgreSQL schema) has one row per migration
applied; the store's version is the highest. `migrate` runs in one transaction holding an
advisory lock on the schema's name, so processes opening the store at once take turns and
the later ones find nothing to do. A migration is a function of the connection and the
schema name, never edited once released: a change of schema is a new migration.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable

import attrs
import psycopg
from ferrule_kit.errors import StorageSchemaError
from ferrule_kit.sqlrows import dump_json


@attrs.frozen
class Migration:
    version: int
    description: str
    apply: Callable[[psycopg.AsyncConnection, str], Awaitable[None]]


async def _v1(conn: psycopg.AsyncConnection, s: str) -> None:
    for statement in (
        f"""CREATE TABLE {s}.sessions (
            session_id text PRIMARY KEY,
            user_id text,
            agent_id text,
            name text,
            session_state text NOT NULL,
            summary text,
            metadata text NOT NULL,
            run_count integer NOT NULL DEFAULT 0,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL
        )""",
        f"CREATE INDEX sessions_by_user ON {s}.sessions (user_id, updated_at)",
        f"CREATE INDEX sessions_by_update ON {s}.sessions (updated_at)",
        # id orders a session's runs; run_id is the caller's
        f"""CREATE TABLE {s}.runs (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            run_id text NOT NULL UNIQUE,
            session_id text NOT NULL REFERENCES {s}.sessions (session_id) ON DELETE CASCADE,
            user_id text,
            agent_id text,
            status text NOT NULL,
            payload text NOT NULL,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL
        )""",
        f"CREATE INDEX runs_by_session ON {s}.runs (session_id, id)",
        f"""CREATE TABLE {s}.memories (
            memory_id text PRIMARY KEY,
            user_id text NOT NULL,
            agent_id text,
            memory text NOT NULL,
            topics text NOT NULL,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL
        )""",
        f"CREATE INDEX memories_by_user ON {s}.memories (user_id, created_at)",
    ):
        await conn.execute(statement)


async def _v2(conn: psycopg.AsyncConnection, s: str) -> None:
    # A history load reads a window of messages; version 1 kept them inside the payload, so
    # each load parsed whole runs. They move to a column of their own (in Python, so the
    # JSON text stays exactly as written), and the window's index covers the status filter.
    await conn.execute(f"ALTER TABLE {s}.runs ADD COLUMN messages text NOT NULL DEFAULT '[]'")
    last = 0
    while True:
        cursor = await conn.execute(
            f"SELECT id, payload FROM {s}.runs WHERE id > %s ORDER BY id LIMIT 500",
            (last,),
        )
        rows = await cursor.fetchall()
        if not rows:
            break
        for row_id, payload in rows:
            data = json.loads(payload)
            messages = data.pop("messages", [])
            await conn.execute(
                f"UPDATE {s}.runs SET payload = %s, messages = %s WHERE id = %s",
                (dump_json(data, "$.run"), dump_json(messages, "$.run.messages"), row_id),
            )
        last = rows[-1][0]
    await conn.execute(f"DROP INDEX {s}.runs_by_session")
    await conn.execute(f"CREATE INDEX runs_window ON {s}.runs (session_id, id, status)")


async def _v3(conn: psycopg.AsyncConnection, s: str) -> None:
    # Writers of a session's state compare-and-set it (ferrule_kit.sqlstore): a stored
    # state starts at version 0, as if never written.
    await conn.execute(
        f"ALTER TABLE {s}.sessions ADD COLUMN state_version integer NOT NULL DEFAULT 0"
    )


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "sessions, runs and user memories", _v1),
    Migration(2, "run messages in a column of their own; covering history-window index", _v2),
    Migration(3, "a version of each session's state, for compare-and-set writes", _v3),
)
LATEST = MIGRATIONS[-1].version


async def current_version(conn: psycopg.AsyncConnection, s: str) -> int:
    cursor = await conn.execute(f"SELECT max(version) FROM {s}.ferrule_schema")
    row = await cursor.fetchone()
    return (row[0] if row else None) or 0


async def migrate(conn: psycopg.AsyncConnection, s: str, store: str, target: int = LATEST) -> int:
    """Bring schema ``s`` to ``target`` in one transaction on ``conn``; the version."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"ferrule:{s}",))
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {s}.ferrule_schema (version integer PRIMARY KEY, "
            "description text NOT NULL, applied_at double precision NOT NULL)"
        )
        version = await current_version(conn, s)
        if version > LATEST:
            raise StorageSchemaError(
                f"the store {store} (schema {s}) has schema version {version}, newer than "
                f"this ferrule-postgres knows ({LATEST}): upgrade ferrule-postgres",
                backend="postgres",
                store=store,
                version=version,
                latest=LATEST,
            )
        for migration in MIGRATIONS:
            if version < migration.version <= target:
                try:
                    await migration.apply(conn, s)
                except psycopg.errors.DuplicateTable as exc:
                    raise StorageSchemaError(
                        f"cannot migrate the store {store} (schema {s}) to schema version "
                        f"{migration.version}: {exc}; is it a ferrule store?",
                        backend="postgres",
                        store=store,
                    ) from None
                await conn.execute(
                    f"INSERT INTO {s}.ferrule_schema (version, description, applied_at) "
                    "VALUES (%s, %s, %s)",
                    (migration.version, migration.description, time.time()),
                )
                version = migration.version
    return version
