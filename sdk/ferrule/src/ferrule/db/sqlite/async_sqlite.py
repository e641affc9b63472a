"""`AsyncSqliteDb`: `SqliteDb`'s store with coroutine methods (`ferrule.db.base.AsyncBaseDb`);
an agent takes either (ferrule's storage serves sync and async agents alike)."""

from __future__ import annotations

import os
from typing import Any, ClassVar, Literal

from ..base import AsyncBaseDb
from .sqlite import SqliteDb, sqlite_file

__all__ = ["AsyncSqliteDb"]


class AsyncSqliteDb(AsyncBaseDb):
    """``AsyncSqliteDb(db_file="tmp/agent.db")``: `SqliteDb`'s keywords."""

    component_type: ClassVar[str] = "sqlite_storage"
    db_file: str | None
    db_url: str | None
    db_engine: Any

    def __init__(
        self,
        db_file: str | os.PathLike[str] | None = None,
        *,
        db_engine: Any = None,
        db_url: str | None = None,
        session_table: str | None = None,
        memory_table: str | None = None,
        metrics_table: str | None = None,
        knowledge_table: str | None = None,
        id: str | None = None,
        store: str | None = None,
        busy_timeout: float | None = None,
        synchronous: Literal["full", "normal"] | None = None,
    ) -> None:
        self._sqlite = SqliteDb(
            sqlite_file(db_file, db_url, db_engine),
            session_table=session_table,
            memory_table=memory_table,
            store=store,
            busy_timeout=busy_timeout,
            synchronous=synchronous,
        )
        self.db_file, self.db_url, self.db_engine = self._sqlite.db_file, db_url, db_engine
        super().__init__(id, session_table, memory_table, metrics_table, knowledge_table)

    def identity(self) -> Any:
        return ("async", self._sqlite.identity())

    def attributes(self, runtime: Any) -> dict[str, Any]:
        return self._sqlite.attributes(runtime)

    def __repr__(self) -> str:
        return f"AsyncSqliteDb(db_file={self.db_file!r})"
