"""Agno's ``agno.vectordb``: `VectorDb` (`ferrule.vectordb.base`), the stores
(``ferrule.vectordb.pgvector.PgVector``: PostgreSQL with pgvector, ferrule-pgvector;
``ferrule.vectordb.chroma.ChromaDb``: a Chroma server, ferrule-chroma;
``ferrule.vectordb.sqlite_vec.SqliteVecDb``: one SQLite file, ferrule-sqlite-vec,
`ferrule.knowledge.Knowledge`'s embedded default), `ferrule.vectordb.distance.Distance`,
`ferrule.vectordb.score` and `ferrule.vectordb.search.SearchType`. The names load on first
access."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kit.content.parts import lazy_attributes

if TYPE_CHECKING:
    from .base import VectorDb

__all__ = ["VectorDb"]

__getattr__ = lazy_attributes(__name__, {"VectorDb": ".base"})
