"""What a model answers besides text (asked with ``modalities`` / ``response_modalities``),
as Agno's media objects: `RunOutput.images` (`ferrule.media.Image`, the bytes and MIME
type) and `RunOutput.response_audio` (`ferrule.media.Audio`), read from the run's assistant
messages, where the engine keeps them as content parts (`reply_media`); and each streamed
piece, for ``RunContentEvent.image`` / ``response_audio`` (`piece_of`). The conversion is
`ferrule.media.reply_media_of` / `reply_audio`: an audio reply's ``content`` is base64 text
where the provider names a format (OpenAI's), bytes where it gives a MIME type (Gemini's).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

from ferrule_kit.content.messages import Message
from ferrule_kit.content.parts import parse_data_url

from ..media import Audio, Image, reply_audio, reply_media_of

__all__ = ["piece_of", "reply_media"]


def piece_of(part: Mapping[str, Any]) -> Image | Audio | None:
    """A streamed media piece (a content part on ferrule's wire) as Agno's object, None for
    one that carries nothing."""
    audio = part.get("input_audio")
    if isinstance(audio, Mapping):
        if not audio.get("data") and not audio.get("transcript"):
            return None
        fields = {k: audio.get(k) for k in ("id", "transcript", "expires_at")}
        return reply_audio(audio.get("data") or "", str(audio.get("format") or ""), **fields)
    image = part.get("image_url")
    if isinstance(image, Mapping) and str(image.get("url", "")).startswith("data:"):
        mime_type, data = parse_data_url(image["url"], "image_url.url")
        return Image(content=base64.b64decode(data), mime_type=mime_type)
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
            media = reply_media_of(part)
            if isinstance(media, Image):
                images.append(media)
            elif isinstance(media, Audio):
                audio = media
    return images or None, audio
