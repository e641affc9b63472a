"""Agno's ``agno.memory.strategies.base``: `MemoryOptimizationStrategy`, a way to make a user's
memories fewer (with a model) while keeping what they say."""

from __future__ import annotations

import abc
import math
from typing import Any

from ...db.schemas.memory import UserMemory

__all__ = ["MemoryOptimizationStrategy"]


class MemoryOptimizationStrategy(abc.ABC):
    """Turns memories into fewer (`optimize` / `aoptimize`), with ``model``."""

    def get_system_prompt(self) -> str:
        """What the model is told to do with the memories (a strategy that asks a model
        says; one that does not, such as keeping the latest, needs none)."""
        raise NotImplementedError(f"{type(self).__name__} asks no model: it has no system prompt")

    @abc.abstractmethod
    def optimize(self, memories: list[UserMemory], model: Any) -> list[UserMemory]:
        """The optimized memories."""

    async def aoptimize(self, memories: list[UserMemory], model: Any) -> list[UserMemory]:
        """`optimize`, off the event loop."""
        import asyncio

        return await asyncio.to_thread(self.optimize, memories, model)

    def count_tokens(self, memories: list[UserMemory]) -> int:
        """About how many tokens the memories' text takes (a token per four characters)."""
        return sum(math.ceil(len(m.memory or "") / 4) for m in memories)
