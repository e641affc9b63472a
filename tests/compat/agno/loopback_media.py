"""The replay's loopback model, when a request asks for audio or images: it answers as the
provider would (`media_answer`), so Agno's media-output programs get a real sound or picture.

- Chat Completions with ``modalities: ["text", "audio"]``: a whole reply (``message.audio``:
  id, base64 WAV / MP3... data, transcript) for a format OpenAI does not stream, streamed
  ``delta.audio`` pieces of 24 kHz pcm16 samples for ``pcm16``.
- Gemini with ``generationConfig.responseModalities``: ``IMAGE`` gets a text part and a PNG
  ``inlineData`` part, ``AUDIO`` an ``audio/L16;codec=pcm;rate=24000`` part of raw samples.

None when the request asks for no media: the replay answers it as ever.
"""

from __future__ import annotations

import base64
import io
import math
import struct
import wave
from typing import Any

from ferrule_kit.testing import chat_completions as chat
from ferrule_kit.testing import tiny_png
from ferrule_kit.testing.loopback import Reply, sse

__all__ = ["media_answer"]

TRANSCRIPT = "A short answer, spoken by the loopback model."
RATE = 24000


def pcm16(seconds: float = 0.25, pitch: float = 440.0) -> bytes:
    """``seconds`` of a sine tone as 24 kHz mono 16-bit samples (little-endian)."""
    count = int(RATE * seconds)
    return b"".join(
        struct.pack("<h", int(8000 * math.sin(2 * math.pi * pitch * i / RATE)))
        for i in range(count)
    )


def wav(samples: bytes) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples)
    return out.getvalue()


def _chat(body: dict[str, Any]) -> Reply | None:
    if "audio" not in (body.get("modalities") or ()):
        return None
    audio_format = (body.get("audio") or {}).get("format")
    samples = pcm16()
    if audio_format == "pcm16":
        half = len(samples) // 2
        pieces = chat.audio_chunks(
            [TRANSCRIPT[:20], TRANSCRIPT[20:]], [samples[:half], samples[half:]]
        )
        return Reply.sse(pieces)
    # the loopback says its sound as WAV whatever other format is asked: the bytes
    # are what a program writes to its file
    return chat.audio_completion(TRANSCRIPT, wav(samples))


def _gemini(body: dict[str, Any]) -> Reply | None:
    modalities = (body.get("generationConfig") or {}).get("responseModalities") or ()
    if "IMAGE" in modalities:
        parts = [
            {"text": "Here is the picture."},
            {"inlineData": {"mimeType": "image/png", "data": _b64(tiny_png())}},
        ]
    elif "AUDIO" in modalities:
        mime_type = f"audio/L16;codec=pcm;rate={RATE}"
        parts = [{"inlineData": {"mimeType": mime_type, "data": _b64(pcm16())}}]
    else:
        return None
    record = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": {
            "promptTokenCount": 9,
            "candidatesTokenCount": 12,
            "candidatesTokensDetails": [
                {"modality": "AUDIO" if "AUDIO" in modalities else "IMAGE", "tokenCount": 12}
            ],
        },
    }
    return Reply.sse([sse(record)])


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def media_answer(path: str, body: dict[str, Any]) -> Reply | None:
    """The reply to a request (its URL ``path`` and JSON ``body``) that asks for audio or
    images, as the provider gives it; None when it asks for none."""
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return _gemini(body)
    if path.endswith("/chat/completions"):
        return _chat(body)
    return None
