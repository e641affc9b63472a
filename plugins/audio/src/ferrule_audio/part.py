"""The audio part: its class and its shape on ferrule's wire (OpenAI's ``input_audio`` part)."""

from __future__ import annotations

import base64
from typing import Any, Literal

import attrs
from ferrule_kit.content.parts import check_fields, decoded_size, required


@attrs.frozen
class AudioPart:
    """Audio as base64 data and its format (``"wav"``, ``"mp3"``, ...)."""

    data: str
    format: str
    type: Literal["audio"] = "audio"

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


def structure(data: dict[str, Any]) -> AudioPart:
    """``{"type": "input_audio", "input_audio": {"data": <base64>, "format": "wav"}}``."""
    check_fields(data, _FIELDS)
    audio = required(data, "input_audio", dict, "input_audio")
    return AudioPart(
        data=required(audio, "data", str, "input_audio.data"),
        format=required(audio, "format", str, "input_audio.format"),
    )


def unstructure(part: AudioPart) -> dict[str, Any]:
    return {"type": "input_audio", "input_audio": {"data": part.data, "format": part.format}}
