"""Agno's ``agno.db.postgres``: `PostgresDb` and `AsyncPostgresDb`."""

from __future__ import annotations

from .async_postgres import AsyncPostgresDb
from .postgres import PostgresDb, libpq_url

__all__ = ["AsyncPostgresDb", "PostgresDb", "libpq_url"]
