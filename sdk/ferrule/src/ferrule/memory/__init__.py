"""Agno's ``agno.memory``: `MemoryManager` (a user's memories, kept by a model's calls) and
`UserMemory` (one stored memory); see `ferrule.memory.manager`."""

from __future__ import annotations

from .manager import MemoryManager, UserMemory

__all__ = ["MemoryManager", "UserMemory"]
