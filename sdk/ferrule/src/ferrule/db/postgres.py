"""`PostgresDb`: sessions and memories in PostgreSQL (ferrule-postgres's ``postgres_storage``),
for many processes and machines."""

from __future__ import annotations

import re
from typing import Any, ClassVar

import attrs

#: SQLAlchemy's driver suffix in Agno's URLs (``postgresql+psycopg://``): libpq takes none.
_DRIVER = re.compile(r"^(postgres(?:ql)?)\+[a-z0-9_]+://")


def libpq_url(db_url: str) -> str:
    """``db_url`` as libpq takes it: an Agno URL's SQLAlchemy driver suffix dropped
    (``postgresql+psycopg://`` is ``postgresql://``)."""
    return _DRIVER.sub(r"\1://", db_url)


@attrs.frozen
class PostgresDb:
    """``PostgresDb(db_url="postgresql://user:pass@host:5432/db")`` (Agno's
    ``postgresql+psycopg://`` URLs work too). With no ``db_url`` the host's
    ``$FERRULE_POSTGRES_DSN`` is used: what a client of a remote `Runtime` does, since a
    server takes connection strings from code in its own process only. ``db_schema``: the
    PostgreSQL schema holding the tables (created if missing)."""

    component_type: ClassVar[str] = "postgres_storage"

    db_url: str | None = attrs.field(default=None, repr=False)  # it may hold a password
    db_schema: str | None = None
    #: Connections kept in the pool, at most.
    max_size: int | None = None

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {}
        if self.db_url is not None:
            attributes["dsn"] = libpq_url(self.db_url)
        if self.db_schema is not None:
            attributes["schema"] = self.db_schema
        if self.max_size is not None:
            attributes["max_size"] = self.max_size
        return attributes


#: Agno's ``AsyncPostgresDb``: ferrule's storage is asynchronous underneath and serves sync and
#: async agents alike, so the async spelling names the same class.
AsyncPostgresDb = PostgresDb
