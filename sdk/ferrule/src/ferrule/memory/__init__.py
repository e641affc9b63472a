"""Agno's ``agno.memory``: `MemoryManager` (a user's memories, kept by a model's calls),
`UserMemory` (one stored memory) and the strategies that make memories fewer; see
`ferrule.memory.manager`."""

from __future__ import annotations

from .manager import MemoryManager, UserMemory
from .strategies import (
    MemoryOptimizationStrategy,
    MemoryOptimizationStrategyFactory,
    MemoryOptimizationStrategyType,
    SummarizeStrategy,
)

__all__ = [
    "MemoryManager",
    "MemoryOptimizationStrategy",
    "MemoryOptimizationStrategyFactory",
    "MemoryOptimizationStrategyType",
    "SummarizeStrategy",
    "UserMemory",
]
