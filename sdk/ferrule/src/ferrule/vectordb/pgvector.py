"""``from ferrule.vectordb.pgvector import PgVector``: `ferrule.knowledge.vectordb.PgVector`."""

from __future__ import annotations

from ..knowledge.vectordb import PgVector
from .search import SearchType

__all__ = ["PgVector", "SearchType"]
