"""Agno's ``agno.memory.strategies``: ways to make a user's memories fewer."""

from __future__ import annotations

from .base import MemoryOptimizationStrategy
from .summarize import SummarizeStrategy
from .types import MemoryOptimizationStrategyFactory, MemoryOptimizationStrategyType

__all__ = [
    "MemoryOptimizationStrategy",
    "MemoryOptimizationStrategyFactory",
    "MemoryOptimizationStrategyType",
    "SummarizeStrategy",
]
