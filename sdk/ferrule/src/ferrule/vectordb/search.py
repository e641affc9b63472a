"""Agno's ``agno.vectordb.search``: `SearchType`, how `Knowledge` searches a vector store.

Its members are the plain strings ferrule takes everywhere a search type goes
(``SearchType.hybrid == "hybrid"``), and a store keeps the string."""

from __future__ import annotations

import enum
from typing import Literal

__all__ = ["SearchType", "SearchTypeName"]

#: A search type by its name.
SearchTypeName = Literal["vector", "keyword", "hybrid"]


class SearchType(str, enum.Enum):
    vector = "vector"
    keyword = "keyword"
    hybrid = "hybrid"
