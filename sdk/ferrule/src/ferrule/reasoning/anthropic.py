"""Agno's ``agno.reasoning.anthropic``: whether Claude thinks natively (`is_anthropic_reasoning_model`:
a Claude given ``thinking``) and its reasoning as a message (`get_anthropic_reasoning` and the async and streamed
forms: `ferrule.reasoning.native`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from ..models.message import Message
from .native import (
    anative_reasoning,
    anative_reasoning_stream,
    native_reasoning,
    native_reasoning_stream,
)

__all__ = [
    "aget_anthropic_reasoning",
    "aget_anthropic_reasoning_stream",
    "get_anthropic_reasoning",
    "get_anthropic_reasoning_stream",
    "is_anthropic_reasoning_model",
]


def is_anthropic_reasoning_model(reasoning_model: Any) -> bool:
    """Whether ``reasoning_model`` thinks natively (see the module docstring)."""
    return type(reasoning_model).__name__ == "Claude" and (
        getattr(reasoning_model, "thinking", None) is not None
    )


def get_anthropic_reasoning(
    reasoning_agent: Any, messages: list[Any], run_metrics: Any = None
) -> Message | None:
    """The reasoning agent's thoughts on ``messages``, as a message."""
    return native_reasoning(reasoning_agent, messages, run_metrics)


async def aget_anthropic_reasoning(
    reasoning_agent: Any, messages: list[Any], run_metrics: Any = None
) -> Message | None:
    """`get_anthropic_reasoning`, awaited."""
    return await anative_reasoning(reasoning_agent, messages, run_metrics)


def get_anthropic_reasoning_stream(
    reasoning_agent: Any, messages: list[Any]
) -> Iterator[tuple[str | None, Message | None]]:
    """The thoughts as they come, then the message."""
    return native_reasoning_stream(reasoning_agent, messages)


async def aget_anthropic_reasoning_stream(
    reasoning_agent: Any, messages: list[Any]
) -> AsyncIterator[tuple[str | None, Message | None]]:
    """`get_anthropic_reasoning_stream`, asynchronously."""
    async for item in anative_reasoning_stream(reasoning_agent, messages):
        yield item
