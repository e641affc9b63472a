"""`AsyncPostgresDb`: `PostgresDb`'s store with coroutine methods
(`ferrule.db.base.AsyncBaseDb`); an agent takes either."""

from __future__ import annotations

from typing import Any, ClassVar

from ..base import AsyncBaseDb
from .postgres import PostgresDb

__all__ = ["AsyncPostgresDb"]


class AsyncPostgresDb(AsyncBaseDb):
    """``AsyncPostgresDb(db_url="postgresql://...")``: `PostgresDb`'s keywords (``id``
    first, as Agno's)."""

    component_type: ClassVar[str] = "postgres_storage"
    db_url: str | None
    db_engine: Any
    db_schema: str | None
    create_schema: bool

    def __init__(
        self,
        id: str | None = None,
        *,
        db_url: str | None = None,
        db_engine: Any = None,
        db_schema: str | None = None,
        session_table: str | None = None,
        memory_table: str | None = None,
        metrics_table: str | None = None,
        knowledge_table: str | None = None,
        create_schema: bool = True,
        max_size: int | None = None,
    ) -> None:
        self._postgres = PostgresDb(
            db_url,
            db_engine=db_engine,
            db_schema=db_schema,
            session_table=session_table,
            memory_table=memory_table,
            create_schema=create_schema,
            max_size=max_size,
        )
        self.db_url, self.db_engine = self._postgres.db_url, db_engine
        self.db_schema, self.create_schema = db_schema, create_schema
        super().__init__(id, session_table, memory_table, metrics_table, knowledge_table)

    def identity(self) -> Any:
        return ("async", self._postgres.identity())

    def attributes(self, runtime: Any) -> dict[str, Any]:
        return self._postgres.attributes(runtime)

    def __repr__(self) -> str:
        return f"AsyncPostgresDb(db_schema={self.db_schema!r})"
