"""Agno's ``agno.db.sqlite``: `SqliteDb` and `AsyncSqliteDb`."""

from __future__ import annotations

from .async_sqlite import AsyncSqliteDb
from .sqlite import SqliteDb

__all__ = ["AsyncSqliteDb", "SqliteDb"]
