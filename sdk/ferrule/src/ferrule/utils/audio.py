"""Agno's ``agno.utils.audio``: writing audio a model returned to a file: base64 data as it
is (`write_audio_to_file`), or raw PCM samples as a WAV file (`write_wav_audio_to_file`;
`pcm_to_wav_bytes` makes the WAV file's bytes, for a Gemini speech reply). The file's
folder is made when missing."""

from __future__ import annotations

import base64
import io
import wave
from pathlib import Path
from typing import Any

__all__ = ["pcm_to_wav_bytes", "write_audio_to_file", "write_wav_audio_to_file"]


def _folder(filename: str) -> Path:
    path = Path(filename)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def pcm_to_wav_bytes(
    pcm_data: bytes,
    channels: int | None = None,
    rate: int | None = None,
    sample_width: int | None = None,
) -> bytes:
    """``pcm_data`` (raw samples) as the bytes of a WAV file: mono, 24 kHz, 16-bit unless
    told otherwise (Gemini's and OpenAI's speech)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(channels or 1)
        sound.setsampwidth(sample_width or 2)
        sound.setframerate(rate or 24000)
        sound.writeframes(pcm_data)
    return out.getvalue()


def write_audio_to_file(audio: Any, filename: str) -> None:
    """Decode base64 ``audio`` (text or bytes) into ``filename``."""
    _folder(filename).write_bytes(base64.b64decode(audio))


def write_wav_audio_to_file(
    filename: str, pcm_data: bytes, channels: int = 1, rate: int = 24000, sample_width: int = 2
) -> None:
    """Write ``pcm_data`` (raw samples) as a WAV file of ``channels`` channels at ``rate``
    samples a second, ``sample_width`` bytes a sample."""
    with wave.open(str(_folder(filename)), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(sample_width)
        out.setframerate(rate)
        out.writeframes(pcm_data)
