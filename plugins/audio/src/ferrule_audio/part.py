"""The audio part: its class and its shape on ferrule's wire (OpenAI's ``input_audio`` part).

Audio a model answers with (OpenAI's ``message.audio``, Gemini's speech) is an audio part of
the assistant message, with what the provider tells of it: the ``id`` a later turn refers
to it by, the ``transcript`` of what it says, and when the provider forgets it
(``expires_at``, Unix seconds). On the wire these join ``input_audio`` when set."""

from __future__ import annotations

import base64
from typing import Any, Literal

import attrs
from ferrule_kit.content.parts import check_fields, decoded_size, required


@attrs.frozen
class AudioPart:
    """Audio as base64 data and its format (``"wav"``, ``"mp3"``, ``"pcm16"``, or a MIME
    type: ``"audio/L16;codec=pcm;rate=24000"``); a model's reply also has its provider's
    ``id``, ``transcript`` and ``expires_at`` where the provider gives them."""

    data: str
    format: str
    type: Literal["audio"] = "audio"
    id: str | None = None
    transcript: str | None = None
    expires_at: int | None = None

    def to_bytes(self) -> bytes:
        return base64.b64decode(self.data)

    @property
    def size(self) -> int:
        """Bytes of audio once decoded, without decoding it."""
        return decoded_size(self.data)

    @property
    def media_format(self) -> str:
        """The format's plain name (``"WAV"`` and ``"audio/wav"`` are ``"wav"``), which
        providers' policies name."""
        return self.format.lower().removeprefix("audio/")


_FIELDS = frozenset({"type", "input_audio"})
_AUDIO_FIELDS = frozenset({"data", "format", "id", "transcript", "expires_at"})


def structure(data: dict[str, Any]) -> AudioPart:
    """``{"type": "input_audio", "input_audio": {"data": <base64>, "format": "wav"}}``, and a
    model's reply's ``id``, ``transcript`` and ``expires_at`` when it has them."""
    check_fields(data, _FIELDS)
    audio = required(data, "input_audio", dict, "input_audio")
    check_fields(audio, _AUDIO_FIELDS, "input_audio")
    return AudioPart(
        data=required(audio, "data", str, "input_audio.data"),
        format=required(audio, "format", str, "input_audio.format"),
        id=required(audio, "id", str, "input_audio.id") if "id" in audio else None,
        transcript=(
            required(audio, "transcript", str, "input_audio.transcript")
            if "transcript" in audio
            else None
        ),
        expires_at=(
            required(audio, "expires_at", int, "input_audio.expires_at")
            if "expires_at" in audio
            else None
        ),
    )


def unstructure(part: AudioPart) -> dict[str, Any]:
    audio: dict[str, Any] = {"data": part.data, "format": part.format}
    for name in ("id", "transcript", "expires_at"):
        if (value := getattr(part, name)) is not None:
            audio[name] = value
    return {"type": "input_audio", "input_audio": audio}
