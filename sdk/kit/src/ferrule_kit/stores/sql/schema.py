"""The SQL storage schema and its migrations, written once over a SQL dialect.

The tables `ferrule_kit.stores.sql.store` reads and writes come from here, for ferrule-sqlite and
ferrule-postgres alike. ``ferrule_schema`` has one row per migration applied; the store's
version is the highest. `SchemaMigration.steps` is a plan (`ferrule_kit.stores.sql.store.Steps`,
run by the backend's driver with `run_blocking` / `run_async`) that creates that table,
refuses a store newer than this code knows, and applies the missing migrations in order,
each with its row. The backend runs it inside the one transaction that opens the store and
holds what makes two processes opening it at once take turns (SQLite's write lock, a
Postgres advisory lock), so the later one finds nothing to do. A migration is never edited
once released: a change of schema is a new migration.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator
from typing import Any

import attrs

from ferrule_kit.errors import StorageSchemaError

from .knowledge import create_knowledge_table
from .plan import Query, SqlDialect, Steps
from .rows import dump_json
from .tables import TableNames

__all__ = ["LATEST", "MIGRATIONS", "Migration", "SchemaMigration"]

#: A migration's statements, for one store (its dialect, its tables' prefix).
MigrationSteps = Generator[Query, Any, None]


@attrs.frozen
class Migration:
    version: int
    description: str
    steps: Callable[[SchemaMigration], MigrationSteps]


def _v1(m: SchemaMigration) -> MigrationSteps:
    real = m.dialect.float_type
    sessions, runs, memories = m.table("sessions"), m.table("runs"), m.table("memories")
    for statement in (
        f"""CREATE TABLE {sessions} (
            session_id TEXT PRIMARY KEY,
            user_id TEXT,
            agent_id TEXT,
            name TEXT,
            session_state TEXT NOT NULL,
            summary TEXT,
            metadata TEXT NOT NULL,
            run_count INTEGER NOT NULL DEFAULT 0,
            created_at {real} NOT NULL,
            updated_at {real} NOT NULL
        )""",
        f"CREATE INDEX {m.index('sessions', 'by_user')} ON {sessions} (user_id, updated_at)",
        f"CREATE INDEX {m.index('sessions', 'by_update')} ON {sessions} (updated_at)",
        # id orders a session's runs; run_id is the caller's
        f"""CREATE TABLE {runs} (
            id {m.dialect.serial_key},
            run_id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES {sessions} (session_id) ON DELETE CASCADE,
            user_id TEXT,
            agent_id TEXT,
            status TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at {real} NOT NULL,
            updated_at {real} NOT NULL
        )""",
        f"CREATE INDEX {m.index('runs', 'by_session')} ON {runs} (session_id, id)",
        # A user's memories may be shared by table sets of one database (agents with their
        # own session tables and one memory table, as Agno's programs do): made when missing.
        f"""CREATE TABLE IF NOT EXISTS {memories} (
            memory_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT,
            memory TEXT NOT NULL,
            topics TEXT NOT NULL,
            created_at {real} NOT NULL,
            updated_at {real} NOT NULL
        )""",
        f"CREATE INDEX IF NOT EXISTS {m.index('memories', 'by_user')} "
        f"ON {memories} (user_id, created_at)",
    ):
        yield m.dialect.query(statement)


def _v2(m: SchemaMigration) -> MigrationSteps:
    # A history load reads a window of messages; version 1 kept them inside the payload, so
    # each load parsed whole runs (tool results, metrics). They move to a column of their
    # own, and the window's index covers the status filter so skipped runs cost no row read.
    runs, q = m.table("runs"), m.dialect.query
    yield q(f"ALTER TABLE {runs} ADD COLUMN messages TEXT NOT NULL DEFAULT '[]'")
    # In Python, not with the database's JSON functions: those re-serialize what they move.
    last = 0
    while True:
        rows = yield q(
            f"SELECT id, payload FROM {runs} WHERE id > ? ORDER BY id LIMIT 500", (last,), "all"
        )
        if not rows:
            break
        for row_id, payload in rows:
            data = json.loads(payload)
            messages = data.pop("messages", [])
            yield q(
                f"UPDATE {runs} SET payload = ?, messages = ? WHERE id = ?",
                (dump_json(data, "$.run"), dump_json(messages, "$.run.messages"), row_id),
            )
        last = rows[-1][0]
    # an index lives in its table's schema
    yield q(f"DROP INDEX {m.prefix}{m.index('runs', 'by_session')}")
    yield q(f"CREATE INDEX {m.index('runs', 'window')} ON {runs} (session_id, id, status)")


def _v3(m: SchemaMigration) -> MigrationSteps:
    # Writers of a session's state compare-and-set it (ferrule_kit.stores.sql.store): a stored
    # state starts at version 0, as if never written.
    yield m.dialect.query(
        f"ALTER TABLE {m.table('sessions')} ADD COLUMN state_version INTEGER NOT NULL DEFAULT 0"
    )


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "sessions, runs and user memories", _v1),
    Migration(2, "run messages in a column of their own; covering history-window index", _v2),
    Migration(3, "a version of each session's state, for compare-and-set writes", _v3),
)
#: The newest schema version (`ferrule_kit.stores.sql.store.SqlStorage`'s ``latest``).
LATEST = MIGRATIONS[-1].version


class SchemaMigration:
    """Bringing one store to schema version ``target``: the plan (`steps`), and the
    migration it is applying while its steps run (`applying`), which `failed` names when
    the driver raises there.

    ``package`` is the backend's distribution (named in "upgrade ..."), ``where`` names the
    store in messages (never with a password; the store itself by default), ``prefix``
    qualifies the table names (a Postgres schema: ``"ferrule."``) and ``tables`` names them
    (`TableNames`).
    """

    def __init__(
        self,
        dialect: SqlDialect,
        *,
        backend: str,
        package: str,
        store: str,
        where: str | None = None,
        prefix: str = "",
        target: int = LATEST,
        tables: TableNames | None = None,
    ) -> None:
        self.tables = tables or TableNames()
        self.dialect = dialect
        self.backend = backend
        self.package = package
        self.store = store
        self.where = store if where is None else where
        self.prefix = prefix
        self.target = target
        self.applying: Migration | None = None

    def table(self, kind: str) -> str:
        """A table's name in SQL (``sessions``, ``runs`` or ``memories``), qualified."""
        return self.prefix + self.tables.sql(getattr(self.tables, kind))

    def index(self, kind: str, suffix: str) -> str:
        """An index's name (unqualified: it lives in its table's schema), from its table's."""
        return self.tables.sql(f"{getattr(self.tables, kind)}_{suffix}")

    def steps(self) -> Steps:
        """The plan: its result is ``{"version": ...}``, the version the store is at."""
        q, table = self.dialect.query, self.prefix + self.tables.sql(self.tables.schema)
        yield q(
            f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER PRIMARY KEY, "
            f"description TEXT NOT NULL, applied_at {self.dialect.float_type} NOT NULL)"
        )
        row = yield q(f"SELECT max(version) FROM {table}", (), "one")
        version: int = (row[0] if row else None) or 0
        if version > LATEST:
            raise StorageSchemaError(
                f"the store {self.where} has schema version {version}, newer than this "
                f"{self.package} knows ({LATEST}): upgrade {self.package}",
                backend=self.backend,
                store=self.store,
                version=version,
                latest=LATEST,
            )
        for migration in MIGRATIONS:
            if version < migration.version <= self.target:
                self.applying = migration
                yield from migration.steps(self)
                self.applying = None
                yield q(
                    f"INSERT INTO {table} (version, description, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.description, time.time()),
                )
                version = migration.version
        yield from create_knowledge_table(self.dialect, self.tables, self.prefix)
        return {"version": version}

    def failed(self, exc: BaseException) -> StorageSchemaError:
        """The error for a driver's ``exc`` raised while `applying` a migration: most
        likely the store holds tables of another program under the same names."""
        version = None if self.applying is None else self.applying.version
        return StorageSchemaError(
            f"cannot migrate the store {self.where} to schema version {version}: {exc}; "
            "is it a ferrule store?",
            backend=self.backend,
            store=self.store,
        )
