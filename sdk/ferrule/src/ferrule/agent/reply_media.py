"""What a model answers besides text (asked with ``modalities`` / ``response_modalities``),
as Agno's media objects: `RunOutput.images` (`ferrule.media.Image`, the bytes and MIME
type) and `RunOutput.response_audio` (`ferrule.media.Audio`), read from the run's assistant
messages, where the engine keeps them as content parts (`reply_media`); and each streamed
piece, for ``RunContentEvent.image`` / ``response_audio`` (`piece_of`).

An audio reply's ``content`` is what the provider's SDK gives (Agno's programs decode it
so): base64 text where the provider names a format (OpenAI's ``wav``, ``pcm16``...), bytes
where it gives a MIME type (Gemini's ``audio/L16;codec=pcm;rate=24000``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

from ferrule_kit.content.messages import Message
from ferrule_kit.content.parts import parse_data_url

from ..media import Audio, Image

__all__ = ["piece_of", "reply_media"]


def _audio(data: str, audio_format: str, fields: Mapping[str, Any]) -> Audio:
    extra = {k: fields.get(k) for k in ("transcript", "expires_at") if fields.get(k) is not None}
    if "/" in audio_format:  # a MIME type: Gemini's speech, raw samples as bytes
        return Audio(
            content=base64.b64decode(data) if data else None, mime_type=audio_format, **extra
        )
    return Audio(content=data or None, format=audio_format, id=fields.get("id") or None, **extra)


def _image(data: str, mime_type: str | None) -> Image:
    return Image(content=base64.b64decode(data), mime_type=mime_type)


def piece_of(part: Mapping[str, Any]) -> Image | Audio | None:
    """A streamed media piece (a content part on ferrule's wire) as Agno's object, None for
    one that carries nothing."""
    audio = part.get("input_audio")
    if isinstance(audio, Mapping):
        if not audio.get("data") and not audio.get("transcript"):
            return None
        return _audio(audio.get("data") or "", str(audio.get("format") or ""), audio)
    image = part.get("image_url")
    if isinstance(image, Mapping) and str(image.get("url", "")).startswith("data:"):
        mime_type, data = parse_data_url(image["url"], "image_url.url")
        return _image(data, mime_type)
    return None


def reply_media(messages: Iterable[Message]) -> tuple[list[Image] | None, Audio | None]:
    """The images of ``messages``' assistant replies (None when none), and the last audio
    reply (None when none)."""
    images: list[Image] = []
    audio: Audio | None = None
    for message in messages:
        if message.role != "assistant":
            continue
        for part in message.contents:
            kind = getattr(part, "type", None)
            if kind == "image" and getattr(part, "data", None):
                images.append(_image(part.data, getattr(part, "mime_type", None)))  # type: ignore[attr-defined]
            elif kind == "audio":
                fields = {k: getattr(part, k, None) for k in ("id", "transcript", "expires_at")}
                audio = _audio(part.data, part.format, fields)  # type: ignore[attr-defined]
    return images or None, audio
