"""Agno's ``agno.memory.strategies.types``: the strategies by name
(`MemoryOptimizationStrategyType`) and `MemoryOptimizationStrategyFactory`."""

from __future__ import annotations

import enum
from typing import Any

from ferrule_kernel import InvalidInputError

from .base import MemoryOptimizationStrategy
from .summarize import SummarizeStrategy

__all__ = ["MemoryOptimizationStrategyFactory", "MemoryOptimizationStrategyType"]


class MemoryOptimizationStrategyType(str, enum.Enum):
    SUMMARIZE = "summarize"


class MemoryOptimizationStrategyFactory:
    """Makes a strategy from its name."""

    @classmethod
    def create_strategy(
        cls, strategy_type: MemoryOptimizationStrategyType | str, **kwargs: Any
    ) -> MemoryOptimizationStrategy:
        try:
            kind = MemoryOptimizationStrategyType(strategy_type)
        except ValueError:
            known = ", ".join(t.value for t in MemoryOptimizationStrategyType)
            raise InvalidInputError(
                f"unknown strategy {strategy_type!r}; one of {known}", field="strategy"
            ) from None
        strategies: dict[MemoryOptimizationStrategyType, type[Any]] = {
            MemoryOptimizationStrategyType.SUMMARIZE: SummarizeStrategy
        }
        made: MemoryOptimizationStrategy = strategies[kind](**kwargs)
        return made
