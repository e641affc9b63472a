"""A reasoning model's own thoughts, as Agno's per-provider reasoning functions give them
(`openai`, `anthropic`, `gemini`, `ollama` are these under their names): the reasoning
agent runs on the run's messages and its reasoning (the model's reasoning channel, else the
text between ``<think>`` tags, else its reply) becomes an assistant message in
``<thinking>`` tags with ``reasoning_content``. A failed reasoning call gives None (the run
goes on without it) and is logged; ``run_metrics`` gains the reasoning run's tokens.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from ..agent.failed_runs import raise_failed
from ..models.message import Message

__all__ = [
    "accumulate",
    "anative_reasoning",
    "anative_reasoning_stream",
    "kit_messages",
    "native_reasoning",
    "native_reasoning_stream",
    "thinking_message",
]

_LOG = logging.getLogger("ferrule.reasoning")
_TOKENS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
)


def thinking_message(reasoning: str) -> Message:
    """The assistant message carrying ``reasoning``."""
    return Message(
        role="assistant",
        content=f"<thinking>\n{reasoning}\n</thinking>",
        reasoning_content=reasoning,
    )


def kit_messages(messages: Sequence[Any], system_role: bool) -> list[Any]:
    """``messages`` as the engine's (developer ones as system ones with ``system_role``)."""
    out = []
    for message in messages:
        if isinstance(message, Message):
            if system_role and message.role == "developer":
                message = Message(role="system", content=message.content)
            out.append(message.to_kit())
        else:
            out.append(message)
    return out


def _between_think_tags(text: str) -> str:
    start, end = text.find("<think>"), text.find("</think>")
    if start >= 0 and end > start:
        return text[start + len("<think>") : end].strip()
    return text


def _reasoning_of(run: Any) -> str:
    channel = "".join(
        part.text
        for message in getattr(run, "messages", ())
        if getattr(message, "role", None) == "assistant"
        for part in getattr(message, "reasoning", ())
    )
    if channel:
        return channel
    content = run.content
    return _between_think_tags(content) if isinstance(content, str) else ""


def accumulate(run_metrics: Any, run: Any) -> None:
    """Add ``run``'s tokens to ``run_metrics`` (nothing without either)."""
    source = getattr(run, "metrics", None)
    if run_metrics is None or source is None:
        return
    for name in _TOKENS:
        value = getattr(source, name, None)
        if value and hasattr(run_metrics, name):
            setattr(run_metrics, name, (getattr(run_metrics, name) or 0) + value)


def native_reasoning(
    reasoning_agent: Any,
    messages: Sequence[Any],
    run_metrics: Any = None,
    *,
    system_role: bool = False,
) -> Message | None:
    """The reasoning message of ``reasoning_agent`` on ``messages`` (see the module
    docstring); ``system_role`` sends developer messages as system ones."""
    try:
        run = raise_failed(reasoning_agent.run(kit_messages(messages, system_role)))
    except Exception as exc:  # the run goes on without reasoning, as Agno's does
        _LOG.warning("reasoning failed: %s: %s", type(exc).__name__, exc)
        return None
    accumulate(run_metrics, run)
    return thinking_message(_reasoning_of(run))


async def anative_reasoning(
    reasoning_agent: Any,
    messages: Sequence[Any],
    run_metrics: Any = None,
    *,
    system_role: bool = False,
) -> Message | None:
    """`native_reasoning`, awaited."""
    try:
        run = raise_failed(await reasoning_agent.arun(kit_messages(messages, system_role)))
    except Exception as exc:
        _LOG.warning("reasoning failed: %s: %s", type(exc).__name__, exc)
        return None
    accumulate(run_metrics, run)
    return thinking_message(_reasoning_of(run))


def _piece(event: Any, text: list[str], content: list[str]) -> str | None:
    if getattr(event, "event", None) != "RunContent":
        return None
    if isinstance(getattr(event, "content", None), str):
        content.append(event.content)
    reasoning = getattr(event, "reasoning_content", None)
    if reasoning:
        text.append(reasoning)
        return str(reasoning)
    return None


def native_reasoning_stream(
    reasoning_agent: Any, messages: Sequence[Any], *, system_role: bool = False
) -> Iterator[tuple[str | None, Message | None]]:
    """The reasoning as it comes (``(delta, None)``), then ``(None, message)``."""
    text: list[str] = []
    content: list[str] = []
    try:
        for event in reasoning_agent.run(kit_messages(messages, system_role), stream=True):
            delta = _piece(event, text, content)
            if delta:
                yield delta, None
    except Exception as exc:
        _LOG.warning("reasoning failed: %s: %s", type(exc).__name__, exc)
        return
    yield None, thinking_message("".join(text) or _between_think_tags("".join(content)))


async def anative_reasoning_stream(
    reasoning_agent: Any, messages: Sequence[Any], *, system_role: bool = False
) -> AsyncIterator[tuple[str | None, Message | None]]:
    """`native_reasoning_stream`, asynchronously."""
    text: list[str] = []
    content: list[str] = []
    try:
        async for event in reasoning_agent.arun(kit_messages(messages, system_role), stream=True):
            delta = _piece(event, text, content)
            if delta:
                yield delta, None
    except Exception as exc:
        _LOG.warning("reasoning failed: %s: %s", type(exc).__name__, exc)
        return
    yield None, thinking_message("".join(text) or _between_think_tags("".join(content)))
