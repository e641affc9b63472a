"""Agno's ``agno.utils.audio``: writing audio a model returned to a file: base64 data as it
is (`write_audio_to_file`), or raw PCM samples as a WAV file (`write_wav_audio_to_file`).
The file's folder is made when missing."""

from __future__ import annotations

import base64
import wave
from pathlib import Path
from typing import Any

__all__ = ["write_audio_to_file", "write_wav_audio_to_file"]


def _folder(filename: str) -> Path:
    path = Path(filename)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


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
