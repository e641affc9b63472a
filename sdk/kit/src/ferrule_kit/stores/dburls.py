"""Database URLs as users write them (SQLAlchemy's, as Agno's programs do) and as the
drivers take them; and the PostgreSQL connection string a store is given (`postgres_dsn`),
with the name it is shown by and the secrets kept out of its messages."""

from __future__ import annotations

import os
import re

from ferrule_kernel import InvalidInputError

__all__ = ["libpq_url", "postgres_dsn"]

#: SQLAlchemy's driver suffix in Agno's URLs (``postgresql+psycopg://``): libpq takes none.
_DRIVER = re.compile(r"^(postgres(?:ql)?)\+[a-z0-9_]+://")


def libpq_url(db_url: str) -> str:
    """``db_url`` as libpq takes it: a SQLAlchemy driver suffix dropped
    (``postgresql+psycopg://`` is ``postgresql://``)."""
    return _DRIVER.sub(r"\1://", db_url)


def postgres_dsn(given: str | None, variable: str) -> tuple[str, str, list[str]]:
    """The connection string a PostgreSQL store connects with (``given``: a libpq string or
    URL, else the host's ``$variable``), the name it is shown by (``host:port/dbname``), and
    the secrets (its password) to scrub from any text. Needs psycopg (the PostgreSQL plugins
    install it) to read the string as libpq does; a string it cannot read is refused
    without quoting it."""
    import psycopg

    dsn = given or os.environ.get(variable)
    if not dsn:
        raise InvalidInputError(
            f"no database: give a dsn (from this process) or set {variable} on the host",
            field="$.dsn",
        )
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        # psycopg's message would quote the string, password included
        raise InvalidInputError("not a valid connection string", field="$.dsn") from None
    host = str(info.get("host") or info.get("hostaddr") or "localhost")
    port = str(info.get("port") or 5432)
    dbname = str(info.get("dbname") or info.get("user") or "")
    secrets = [str(info["password"])] if info.get("password") else []
    return dsn, f"{host}:{port}/{dbname}", secrets
