"""Agno's ``agno.db.schemas``: the records a db keeps, in Agno's shape (`UserMemory`,
`KnowledgeRow`)."""

from __future__ import annotations

from .knowledge import KnowledgeRow
from .memory import UserMemory

__all__ = ["KnowledgeRow", "UserMemory"]
