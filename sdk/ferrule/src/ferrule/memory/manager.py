"""Agno's ``agno.memory.manager``: `MemoryManager` (`ferrule.agent.memory`, where the agent
runs it) and `UserMemory` (the storage contract's record, `ferrule_kit.storage`)."""

from __future__ import annotations

from ferrule_kit.storage import UserMemory

from ..agent.memory import MemoryManager

__all__ = ["MemoryManager", "UserMemory"]
