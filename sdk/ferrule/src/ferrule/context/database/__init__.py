"""Agno's ``agno.context.database``: `DatabaseContextProvider` (refused: SQLAlchemy engines)."""

from __future__ import annotations

from .provider import DEFAULT_READ_INSTRUCTIONS, DEFAULT_WRITE_INSTRUCTIONS, DatabaseContextProvider

__all__ = ["DEFAULT_READ_INSTRUCTIONS", "DEFAULT_WRITE_INSTRUCTIONS", "DatabaseContextProvider"]
