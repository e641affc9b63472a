"""Where an `Agent` keeps its sessions, runs and user memories: ``Agent(db=...)``.

    from ferrule.db.sqlite import SqliteDb
    agent = Agent(model=model, db=SqliteDb(db_file="tmp/agent.db"))

`SqliteDb` and `PostgresDb` (and `AsyncSqliteDb`, `AsyncPostgresDb`, `InMemoryDb`) describe a
storage component (``sqlite_storage`` from ferrule-sqlite, ``postgres_storage`` from
ferrule-postgres); the agent defines it on its runtime when first needed, so the store lives
wherever the runtime does: in this process, or on the server of a remote `Runtime`. Each is
an Agno db too (`ferrule.db.base.BaseDb`: ``get_sessions``, ``get_user_memories``...). Any
`StorageDb` works, and so does the name of a storage component already defined on the
agent's runtime.
"""

from __future__ import annotations

from .base import AsyncBaseDb, BaseDb, SessionType, StorageDb
from .postgres import AsyncPostgresDb, PostgresDb
from .sqlite import AsyncSqliteDb, SqliteDb

__all__ = [
    "AsyncBaseDb",
    "AsyncPostgresDb",
    "AsyncSqliteDb",
    "BaseDb",
    "PostgresDb",
    "SessionType",
    "SqliteDb",
    "StorageDb",
]
