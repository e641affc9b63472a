"""Agno's ``agno.reasoning.ollama``: whether an Ollama model thinks natively (`is_ollama_reasoning_model`:
Ollama serving QwQ, DeepSeek-R1, Qwen2.5-Coder or OpenThinker) and its reasoning as a message (`get_ollama_reasoning` and the async and streamed
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
    "aget_ollama_reasoning",
    "aget_ollama_reasoning_stream",
    "get_ollama_reasoning",
    "get_ollama_reasoning_stream",
    "is_ollama_reasoning_model",
]


def is_ollama_reasoning_model(reasoning_model: Any) -> bool:
    """Whether ``reasoning_model`` thinks natively (see the module docstring)."""
    model_id = str(getattr(reasoning_model, "id", ""))
    return type(reasoning_model).__name__ == "Ollama" and any(
        tag in model_id for tag in ("qwq", "deepseek-r1", "qwen2.5-coder", "openthinker")
    )


def get_ollama_reasoning(
    reasoning_agent: Any, messages: list[Any], run_metrics: Any = None
) -> Message | None:
    """The reasoning agent's thoughts on ``messages``, as a message."""
    return native_reasoning(reasoning_agent, messages, run_metrics)


async def aget_ollama_reasoning(
    reasoning_agent: Any, messages: list[Any], run_metrics: Any = None
) -> Message | None:
    """`get_ollama_reasoning`, awaited."""
    return await anative_reasoning(reasoning_agent, messages, run_metrics)


def get_ollama_reasoning_stream(
    reasoning_agent: Any, messages: list[Any]
) -> Iterator[tuple[str | None, Message | None]]:
    """The thoughts as they come, then the message."""
    return native_reasoning_stream(reasoning_agent, messages)


async def aget_ollama_reasoning_stream(
    reasoning_agent: Any, messages: list[Any]
) -> AsyncIterator[tuple[str | None, Message | None]]:
    """`get_ollama_reasoning_stream`, asynchronously."""
    async for item in anative_reasoning_stream(reasoning_agent, messages):
        yield item
