"""Agno's ``agno.db.async_postgres``: `AsyncPostgresDb` (``ferrule.db.postgres``'s)."""

from __future__ import annotations

from ..postgres.async_postgres import AsyncPostgresDb

__all__ = ["AsyncPostgresDb"]
