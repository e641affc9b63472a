"""`AudioContent`: audio parts from bytes or a file, the format checked against the bytes."""

from __future__ import annotations

import base64
import os

from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import media_bytes, read_media_file

from .part import AudioPart

__all__ = ["FORMATS", "MAX_AUDIO_BYTES", "AudioContent", "sniff_audio_format"]

#: The largest audio clip accepted (OpenAI's audio input limit is in this range).
MAX_AUDIO_BYTES = 25 * 1024 * 1024

#: Formats by name, as providers spell them.
FORMATS = ("wav", "mp3", "flac", "ogg", "aac", "m4a", "aiff", "webm")

_ALIASES = {"wave": "wav", "mpeg": "mp3", "mpga": "mp3", "aif": "aiff", "oga": "ogg", "opus": "ogg"}


def sniff_audio_format(data: bytes) -> str | None:
    """The audio format the bytes say they are (magic numbers), or None."""
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav"
    if data.startswith(b"ID3") or (
        len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0 and data[1] & 0x06
    ):
        return "mp3"  # an ID3 tag, or an MPEG audio frame sync with a layer set
    if data.startswith(b"fLaC"):
        return "flac"
    if data.startswith(b"OggS"):
        return "ogg"
    if data[:4] == b"FORM" and data[8:12] in (b"AIFF", b"AIFC"):
        return "aiff"
    if data[4:8] == b"ftyp":
        return "m4a"
    if data.startswith(b"\x1a\x45\xdf\xa3"):
        return "webm"
    if len(data) > 1 and data[0] == 0xFF and data[1] & 0xF6 == 0xF0:
        return "aac"  # an ADTS frame (layer bits 00)
    return None


def _format_name(format: str) -> str:
    if not isinstance(format, str):
        raise InvalidInputError(
            f"expected a format name, got {type(format).__name__}", field="format"
        )
    name = format.lower().lstrip(".")
    name = _ALIASES.get(name, name)
    if name not in FORMATS:
        raise InvalidInputError(
            f"unknown audio format {format!r}; use one of {', '.join(FORMATS)}", field="format"
        )
    return name


class AudioContent:
    """Builds audio parts; see the module docstring."""

    @staticmethod
    def from_bytes(data: bytes, format: str, *, max_bytes: int = MAX_AUDIO_BYTES) -> AudioPart:
        """Audio bytes in ``format`` (``"wav"``, ``"mp3"``, ...); the bytes must be that format."""
        name = _format_name(format)
        data = media_bytes(data, "the audio", max_bytes)
        sniffed = sniff_audio_format(data)
        if sniffed != name:
            found = f"{sniffed} audio" if sniffed else "not a recognised audio format"
            raise InvalidInputError(f"format says {name} but the bytes are {found}", field="format")
        return AudioPart(data=base64.b64encode(data).decode("ascii"), format=name)

    @staticmethod
    def from_path(
        path: str | os.PathLike[str], format: str | None = None, *, max_bytes: int = MAX_AUDIO_BYTES
    ) -> AudioPart:
        """An audio file; ``format`` defaults to the file's extension."""
        if format is None:
            format = os.path.splitext(os.fspath(path))[1]
            if not format:
                raise InvalidInputError(
                    "the file name has no extension; pass format=", field="format"
                )
        data = read_media_file(path, max_bytes)
        return AudioContent.from_bytes(data, format, max_bytes=max_bytes)
