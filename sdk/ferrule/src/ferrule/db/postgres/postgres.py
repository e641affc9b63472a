"""`PostgresDb`: sessions and memories in PostgreSQL (ferrule-postgres's ``postgres_storage``),
for many processes and machines, with Agno's constructor and methods
(`ferrule.db.base.BaseDb`).

``db_url`` is a libpq URL (Agno's SQLAlchemy ``postgresql+psycopg://`` URLs work too), or
the URL of ``db_engine`` (a SQLAlchemy engine's is read); with neither the host's
``$FERRULE_POSTGRES_DSN`` is used: what a client of a remote `Runtime` does, since a server
takes connection strings from code in its own process only. ``db_schema`` is the PostgreSQL
schema holding the tables (created if missing); ``session_table`` and ``memory_table`` name
them (a session's runs go to ``<session_table>_runs``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ferrule_kernel import InvalidInputError
from ferrule_kit.stores.dburls import libpq_url

from ..base import BaseDb

__all__ = ["PostgresDb", "libpq_url", "postgres_url"]

SCHEMA_NOTE = "ferrule-postgres creates its schema when it is missing"


def postgres_url(db_url: str | None, db_engine: Any) -> str | None:
    """The URL a Postgres db names: ``db_engine``'s (with its password), else ``db_url``."""
    if db_engine is None:
        return db_url
    url = getattr(db_engine, "url", None)
    render = getattr(url, "render_as_string", None)
    if url is None:
        raise InvalidInputError("db_engine has no url", field="db_engine")
    return str(render(hide_password=False) if callable(render) else url)


class PostgresDb(BaseDb):
    """``PostgresDb(db_url="postgresql://user:pass@host:5432/db")`` (see the module
    docstring)."""

    component_type: ClassVar[str] = "postgres_storage"
    db_url: str | None
    db_engine: Any
    db_schema: str | None
    create_schema: bool

    def __init__(
        self,
        db_url: str | None = None,
        *,
        db_engine: Any = None,
        db_schema: str | None = None,
        session_table: str | None = None,
        memory_table: str | None = None,
        metrics_table: str | None = None,
        knowledge_table: str | None = None,
        id: str | None = None,
        create_schema: bool = True,
        max_size: int | None = None,
    ) -> None:
        if not create_schema:
            raise InvalidInputError(f"create_schema: {SCHEMA_NOTE}", field="create_schema")
        self.db_url = postgres_url(db_url, db_engine)
        self.db_engine = db_engine
        self.db_schema = db_schema
        self.create_schema = create_schema
        #: Connections kept in the pool, at most.
        self.max_size = max_size
        super().__init__(session_table, memory_table, metrics_table, knowledge_table, id)

    def identity(self) -> Any:
        host = libpq_url(self.db_url).split("@")[-1] if self.db_url else None
        return ("postgres", host, self.db_schema, self.session_table_name, self.memory_table_name)

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = self.table_attributes()
        if self.db_url is not None:
            attributes["dsn"] = libpq_url(self.db_url)
        if self.db_schema is not None:
            attributes["schema"] = self.db_schema
        if self.max_size is not None:
            attributes["max_size"] = self.max_size
        return attributes

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "db_schema": self.db_schema}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PostgresDb:
        keywords = {
            k: v
            for k, v in data.items()
            if k in ("db_url", "db_schema", "session_table", "memory_table")
        }
        return cls(**keywords, id=data.get("id"))

    def __repr__(self) -> str:  # the URL may hold a password: never shown
        return f"PostgresDb(db_schema={self.db_schema!r})"
