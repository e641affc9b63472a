"""``from ferrule.vectordb.sqlite_vec import SqliteVecDb``: `ferrule.knowledge.vectordb.SqliteVecDb`,
the embedded default."""

from __future__ import annotations

from ..knowledge.vectordb import SqliteVecDb
from .search import SearchType

__all__ = ["SearchType", "SqliteVecDb"]
