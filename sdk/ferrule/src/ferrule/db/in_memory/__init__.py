"""Agno's ``agno.db.in_memory``: `InMemoryDb`."""

from __future__ import annotations

from .in_memory_db import InMemoryDb

__all__ = ["InMemoryDb"]
