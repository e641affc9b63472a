"""What of a conversation is shown again or kept, as pure functions of its messages:
``max_tool_calls_from_history`` (`keep_last_tool_calls`: only the newest calls of the
history, with their results), and what a stored run leaves out: its tool calls and their
results with ``store_tool_messages=False`` (`without_tool_calls`), its media with
``store_media=False`` (`without_media`)."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from ferrule_kit.content.messages import Message, TextPart, ValuePart


def keep_last_tool_calls(messages: Sequence[Message], limit: int) -> list[Message]:
    """``messages`` with only their last ``limit`` tool calls and those calls' results; an
    assistant message left with no call and no text goes too."""
    results = [m for m in messages if m.role == "tool"]
    if len(results) <= limit:
        return list(messages)
    kept = {m.tool_call_id for m in results[len(results) - limit :]} if limit else set()
    out: list[Message] = []
    for message in messages:
        if message.role == "tool":
            if message.tool_call_id in kept:
                out.append(message)
        elif message.role == "assistant" and message.tool_calls:
            calls = [c for c in message.tool_calls if c.id in kept]
            if calls or message.contents:
                out.append(attrs.evolve(message, tool_calls=calls))
        else:
            out.append(message)
    return out


def without_tool_calls(messages: Sequence[Message]) -> list[Message]:
    """``messages`` without tool results and without the assistant messages that made the
    calls (what Agno keeps of a run with ``store_tool_messages=False``)."""
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    return [
        m
        for m in messages
        if m.role != "tool"
        and not (m.role == "assistant" and any(c.id in answered for c in m.tool_calls))
    ]


def without_media(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with only their text (images, audio, video and files left out); a user
    message left with nothing says so."""
    out = []
    for message in messages:
        kept = [p for p in message.contents if isinstance(p, (TextPart, ValuePart))]
        if len(kept) == len(message.contents):
            out.append(message)
            continue
        if not kept and message.role == "user":
            kept = [TextPart("[media not stored]")]
        out.append(attrs.evolve(message, contents=kept))
    return out
