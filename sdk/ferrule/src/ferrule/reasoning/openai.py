"""Agno's ``agno.reasoning.openai``: whether an OpenAI model thinks natively (`is_openai_reasoning_model`:
OpenAIChat or OpenAIResponses whose id names o1, o3, o4, 5.1 or 5.2,
or an OpenAILike serving DeepSeek-R1 or MiniMax M2/M3) and its reasoning as a message (`get_openai_reasoning` and the async and streamed
forms: `ferrule.reasoning.native`; developer messages go as system ones)."""

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
    "aget_openai_reasoning",
    "aget_openai_reasoning_stream",
    "get_openai_reasoning",
    "get_openai_reasoning_stream",
    "is_openai_reasoning_model",
]


def is_openai_reasoning_model(reasoning_model: Any) -> bool:
    """Whether ``reasoning_model`` thinks natively (see the module docstring)."""
    name = type(reasoning_model).__name__
    model_id = str(getattr(reasoning_model, "id", "")).lower()
    if name in ("OpenAIChat", "OpenAIResponses") and any(
        tag in model_id for tag in ("o4", "o3", "o1", "5.1", "5.2")
    ):
        return True
    from ..models.openai import OpenAILike

    return isinstance(reasoning_model, OpenAILike) and any(
        tag in model_id for tag in ("deepseek-r1", "minimax-m2", "minimax-m3")
    )


def get_openai_reasoning(
    reasoning_agent: Any, messages: list[Any], run_metrics: Any = None
) -> Message | None:
    """The reasoning agent's thoughts on ``messages``, as a message."""
    return native_reasoning(reasoning_agent, messages, run_metrics, system_role=True)


async def aget_openai_reasoning(
    reasoning_agent: Any, messages: list[Any], run_metrics: Any = None
) -> Message | None:
    """`get_openai_reasoning`, awaited."""
    return await anative_reasoning(reasoning_agent, messages, run_metrics, system_role=True)


def get_openai_reasoning_stream(
    reasoning_agent: Any, messages: list[Any]
) -> Iterator[tuple[str | None, Message | None]]:
    """The thoughts as they come, then the message."""
    return native_reasoning_stream(reasoning_agent, messages, system_role=True)


async def aget_openai_reasoning_stream(
    reasoning_agent: Any, messages: list[Any]
) -> AsyncIterator[tuple[str | None, Message | None]]:
    """`get_openai_reasoning_stream`, asynchronously."""
    async for item in anative_reasoning_stream(reasoning_agent, messages, system_role=True):
        yield item
