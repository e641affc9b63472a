"""Agno's ``agno.vectordb.pgvector``: `PgVector` (PostgreSQL with pgvector, ferrule-pgvector),
its indexes (`HNSW`, `Ivfflat`), `Distance` and `SearchType`."""

from __future__ import annotations

from ..distance import Distance
from ..search import SearchType
from .index import HNSW, Ivfflat
from .pgvector import PgVector

__all__ = ["HNSW", "Distance", "Ivfflat", "PgVector", "SearchType"]
