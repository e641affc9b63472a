"""Audio output over the Chat Completions wire (OpenAI's ``modalities: ["text", "audio"]``
with ``audio: {"voice", "format"}``), for `ferrule_kit.models.chat_completions`.

- The reply's audio is ``message.audio`` (``id``, base64 ``data``, ``transcript``,
  ``expires_at``), or, streamed, ``delta.audio`` pieces of the same fields. Each becomes a
  `ferrule_kit.models.lm.media_delta` carrying an ``input_audio`` part (the format the
  request asked for; ``pcm16`` when streamed), its transcript as the reply's text.
- OpenAI streams audio only as ``pcm16``: a request for another format is sent without
  streaming (`whole_reply` turns the one JSON reply into the same stream items).
- A later turn refers to an earlier audio reply by its ``id`` (``"audio": {"id": ...}``),
  as OpenAI documents, until ``expires_at``; after that the reply goes back as its
  transcript (`assistant_audio`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .lm import (
    FinishReason,
    Usage,
    finish,
    media_delta,
    reasoning_delta,
    text_delta,
    tool_call_delta,
)

__all__ = ["STREAMED_FORMAT", "assistant_audio", "audio_format", "audio_item", "whole_reply"]

#: The one audio format OpenAI streams.
STREAMED_FORMAT = "pcm16"


def audio_format(request: Mapping[str, Any]) -> str | None:
    """The audio format ``request`` asks the reply in, or None when it asks no audio."""
    audio = request.get("audio")
    if "audio" not in (request.get("modalities") or ()) or not isinstance(audio, dict):
        return None
    return str(audio.get("format") or "wav")


def audio_item(audio: Mapping[str, Any], audio_format: str) -> dict[str, Any] | None:
    """The stream item of a reply's ``audio`` (whole, or a streamed piece), None when it
    carries nothing."""
    if not isinstance(audio, Mapping):
        return None
    part: dict[str, Any] = {"data": audio.get("data") or "", "format": audio_format}
    for key, kind in (("id", str), ("transcript", str), ("expires_at", int)):
        value = audio.get(key)
        if isinstance(value, kind) and value != "":
            part[key] = value
    if len(part) == 2 and not part["data"]:
        return None
    return media_delta(
        {"type": "input_audio", "input_audio": part}, text=part.get("transcript", "")
    )


def assistant_audio(message: Any) -> dict[str, Any] | None:
    """``{"id": ...}`` of the audio reply an assistant message holds while OpenAI keeps it
    (its ``expires_at`` not past), else None (the message goes as its text)."""
    for part in message.contents:
        if getattr(part, "type", None) != "audio":
            continue
        audio_id, expires_at = getattr(part, "id", None), getattr(part, "expires_at", None)
        if audio_id and (expires_at is None or expires_at > time.time()):
            return {"id": audio_id}
    return None


def whole_reply(
    body: Any, audio_format: str, finish_reason: Any, usage: Any
) -> list[dict[str, Any]]:
    """The stream items of one non-streamed Chat Completions reply (``body``), ending with
    the finish item that ``finish_reason(reason, had_tool_calls)`` and ``usage(dict)``
    make (the streamed path's own)."""
    choice = ((body or {}).get("choices") or [{}])[0] if isinstance(body, dict) else {}
    message = choice.get("message") or {}
    items: list[dict[str, Any]] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        items.append(reasoning_delta(reasoning))
    content = message.get("content")
    audio = message.get("audio")
    spoken = audio_item(audio, audio_format) if audio else None
    if isinstance(content, str) and content:
        items.append(text_delta(content))
        if spoken is not None:  # the text is said once: the transcript stays with the sound
            spoken["message"]["content"][0]["text"] = ""
    if spoken is not None:
        items.append(spoken)
    calls = message.get("tool_calls") or []
    for index, call in enumerate(calls):
        function = call.get("function") or {}
        items.append(
            tool_call_delta(
                index,
                id=call.get("id") or f"call_{index}",
                name=function.get("name") or "",
                arguments=function.get("arguments") or "",
            )
        )
    reason: FinishReason = finish_reason(choice.get("finish_reason"), bool(calls))
    total: Usage = usage(body.get("usage") if isinstance(body, dict) else None)
    items.append(finish(reason, total))
    return items
