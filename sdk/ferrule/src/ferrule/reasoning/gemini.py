"""Agno's ``agno.reasoning.gemini``: whether Gemini thinks natively (`is_gemini_reasoning_model`:
a Gemini 2.5 or 3 model (or DeepThink) whose thinking is on: a
``thinking_budget`` above 0 or ``include_thoughts`` set) and its reasoning as a message (`get_gemini_reasoning` and the async and streamed
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
    "aget_gemini_reasoning",
    "aget_gemini_reasoning_stream",
    "get_gemini_reasoning",
    "get_gemini_reasoning_stream",
    "is_gemini_reasoning_model",
]


def is_gemini_reasoning_model(reasoning_model: Any) -> bool:
    """Whether ``reasoning_model`` thinks natively (see the module docstring)."""
    if type(reasoning_model).__name__ != "Gemini":
        return False
    model_id = str(getattr(reasoning_model, "id", "")).lower()
    capable = any(tag in model_id for tag in ("2.5", "3.0", "3.5", "deepthink", "gemini-3"))
    budget = getattr(reasoning_model, "thinking_budget", None)
    return capable and (
        (budget is not None and budget > 0)
        or getattr(reasoning_model, "include_thoughts", None) is not None
    )


def get_gemini_reasoning(
    reasoning_agent: Any, messages: list[Any], run_metrics: Any = None
) -> Message | None:
    """The reasoning agent's thoughts on ``messages``, as a message."""
    return native_reasoning(reasoning_agent, messages, run_metrics)


async def aget_gemini_reasoning(
    reasoning_agent: Any, messages: list[Any], run_metrics: Any = None
) -> Message | None:
    """`get_gemini_reasoning`, awaited."""
    return await anative_reasoning(reasoning_agent, messages, run_metrics)


def get_gemini_reasoning_stream(
    reasoning_agent: Any, messages: list[Any]
) -> Iterator[tuple[str | None, Message | None]]:
    """The thoughts as they come, then the message."""
    return native_reasoning_stream(reasoning_agent, messages)


async def aget_gemini_reasoning_stream(
    reasoning_agent: Any, messages: list[Any]
) -> AsyncIterator[tuple[str | None, Message | None]]:
    """`get_gemini_reasoning_stream`, asynchronously."""
    async for item in anative_reasoning_stream(reasoning_agent, messages):
        yield item
