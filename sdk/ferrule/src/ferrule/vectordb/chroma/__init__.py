"""Agno's ``agno.vectordb.chroma``: `ChromaDb` (a Chroma server's collection, ferrule-chroma)."""

from __future__ import annotations

from ..search import SearchType
from .chromadb import ChromaDb

__all__ = ["ChromaDb", "SearchType"]
