"""``from ferrule.vectordb.sqlite_vec import SqliteVecDb``: `ferrule.knowledge.vectordb.SqliteVecDb`,
the embedded default."""

from __future__ import annotations

from ..knowledge.vectordb import SqliteVecDb

__all__ = ["SqliteVecDb"]
