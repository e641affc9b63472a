"""The settings that ask a model to answer with audio or images, as Agno's model classes
take them, checked and put in the provider's request fields.

- Chat Completions (`OpenAIChat` and the classes over the same wire): ``modalities``
  (``["text"]``, ``["text", "audio"]``) and ``audio`` (``{"voice": "alloy", "format":
  "wav"}``), sent as OpenAI's ``modalities`` / ``audio`` fields (`chat_output_fields`).
- Gemini: ``response_modalities`` (``["TEXT", "IMAGE"]``, ``["AUDIO"]``, any case) and
  ``speech_config`` (Google's ``SpeechConfig``, snake_case or camelCase keys), sent as
  ``generationConfig.responseModalities`` / ``speechConfig`` (`gemini_output_config`).

A bad value is refused when the model is made, naming the keyword.
"""

from __future__ import annotations

import re
from typing import Any

from ferrule_kernel import InvalidInputError

__all__ = ["AUDIO_FORMATS", "chat_output_fields", "gemini_output_config"]

#: The audio formats OpenAI's Chat Completions answers in (``pcm16``: raw 24 kHz 16-bit
#: mono samples, the one format it streams).
AUDIO_FORMATS = ("wav", "mp3", "flac", "opus", "aac", "pcm16")
_CHAT_MODALITIES = ("text", "audio")
_GEMINI_MODALITIES = ("TEXT", "IMAGE", "AUDIO")
_SPEECH_FIELDS = frozenset({"voiceConfig", "multiSpeakerVoiceConfig", "languageCode"})


def _strings(value: Any, field: str) -> list[str]:
    if not isinstance(value, list | tuple) or not value:
        raise InvalidInputError(f"must be a non-empty list of strings; got {value!r}", field=field)
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise InvalidInputError(
                f"must be a string; got {type(item).__name__}", field=f"{field}[{index}]"
            )
    return list(value)


def chat_output_fields(modalities: Any, audio: Any) -> dict[str, Any]:
    """The Chat Completions request fields of ``modalities`` and ``audio`` (none when both
    are None). Audio output needs both: ``"audio"`` among the modalities and an ``audio``
    dict naming the ``voice`` (a name, or ``{"id": ...}`` for a custom voice) and the
    ``format``."""
    fields: dict[str, Any] = {}
    if modalities is not None:
        names = _strings(modalities, "modalities")
        for index, name in enumerate(names):
            if name not in _CHAT_MODALITIES:
                raise InvalidInputError(
                    f"must be 'text' or 'audio'; got {name!r}", field=f"modalities[{index}]"
                )
        fields["modalities"] = names
    speaks = "audio" in fields.get("modalities", ())
    if audio is None:
        if speaks:
            raise InvalidInputError(
                "audio output needs audio={'voice': ..., 'format': ...}", field="audio"
            )
        return fields
    if not speaks:
        raise InvalidInputError(
            "audio sets the voice of audio output: give modalities=['text', 'audio'] too",
            field="audio",
        )
    if not isinstance(audio, dict):
        raise InvalidInputError(
            f"must be a dict with 'voice' and 'format'; got {type(audio).__name__}", field="audio"
        )
    unknown = sorted(set(audio) - {"voice", "format"})
    if unknown:
        raise InvalidInputError("unknown field", field=f"audio.{unknown[0]}")
    voice = audio.get("voice")
    if not (
        (isinstance(voice, str) and voice)
        or (isinstance(voice, dict) and isinstance(voice.get("id"), str))
    ):
        raise InvalidInputError(
            f"must be a voice's name ('alloy', 'sage', ...) or {{'id': ...}}; got {voice!r}",
            field="audio.voice",
        )
    audio_format = audio.get("format")
    if audio_format not in AUDIO_FORMATS:
        raise InvalidInputError(
            f"must be one of {', '.join(AUDIO_FORMATS)}; got {audio_format!r}",
            field="audio.format",
        )
    fields["audio"] = {"voice": voice, "format": audio_format}
    return fields


def _camel(key: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def _camel_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_camel(str(k)): _camel_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


def gemini_output_config(response_modalities: Any, speech_config: Any) -> dict[str, Any]:
    """The ``generationConfig`` fields of Gemini's ``response_modalities`` (upper-cased, as
    the API names them) and ``speech_config`` (keys in the API's camelCase)."""
    config: dict[str, Any] = {}
    if response_modalities is not None:
        names = [m.upper() for m in _strings(response_modalities, "response_modalities")]
        for index, name in enumerate(names):
            if name not in _GEMINI_MODALITIES:
                raise InvalidInputError(
                    f"must be 'TEXT', 'IMAGE' or 'AUDIO'; got {response_modalities[index]!r}",
                    field=f"response_modalities[{index}]",
                )
        config["responseModalities"] = names
    if speech_config is not None:
        if not isinstance(speech_config, dict):
            raise InvalidInputError(
                "must be a dict ({'voice_config': {'prebuilt_voice_config': {'voice_name': "
                f"'Kore'}}}}); got {type(speech_config).__name__}",
                field="speech_config",
            )
        speech = _camel_keys(speech_config)
        unknown = sorted(set(speech) - _SPEECH_FIELDS)
        if unknown:
            raise InvalidInputError("unknown field", field=f"speech_config.{unknown[0]}")
        config["speechConfig"] = speech
    return config
