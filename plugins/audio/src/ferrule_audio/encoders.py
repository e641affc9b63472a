"""An audio part in each provider dialect that takes audio. The provider's `ContentPolicy`
(formats, size) was checked before any of these runs."""

from __future__ import annotations

from typing import Any

from ferrule_kit.content.policy import Encoding

from .part import AudioPart

#: Gemini's MIME type for each format name.
GEMINI_MIME_TYPES = {
    "wav": "audio/wav",
    "mp3": "audio/mp3",
    "mpeg": "audio/mp3",
    "aiff": "audio/aiff",
    "aac": "audio/aac",
    "ogg": "audio/ogg",
    "flac": "audio/flac",
}


def chat_completions(part: AudioPart, encoding: Encoding) -> dict[str, Any]:
    """OpenAI and compatible servers: an ``input_audio`` part."""
    return {"type": "input_audio", "input_audio": {"data": part.data, "format": part.media_format}}


def gemini(part: AudioPart, encoding: Encoding) -> dict[str, Any]:
    """A Gemini ``inlineData`` part with the format's MIME type."""
    mime_type = GEMINI_MIME_TYPES.get(part.media_format)
    if mime_type is None:
        raise encoding.refuse(
            f"{encoding.policy.name} takes audio as {', '.join(sorted(GEMINI_MIME_TYPES))}; "
            f"got {part.format!r}",
            "audio",
        )
    return {"inlineData": {"mimeType": mime_type, "data": part.data}}
