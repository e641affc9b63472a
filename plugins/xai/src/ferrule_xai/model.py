"""The xAI component: the sdk's Chat Completions translator plus xAI's differences
(protocols.md §3.5): its base URL and key, images as JPEG/PNG up to 10 MiB (base64 or
URL) and no audio, ``max_tokens``, reasoning streamed as ``delta.reasoning_content``
(grok-3-mini), ``reasoning_effort`` (low/high) for grok-3-mini only, no ``stop`` for
reasoning models, and error bodies shaped ``{"code": ..., "error": "..."}``."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from ferrule_kit.content.parts import OPENAI_COMPATIBLE
from ferrule_kit.content.policy import Accepts, ContentPolicy
from ferrule_kit.models.chat_completions import (
    ChatCompletionsModel,
    Dialect,
    ModelRules,
    make_client,
)
from ferrule_kit.network.http import (
    ProviderErrorInfo,
    environment_base_url,
    parse_error_body,
    resolve_api_key,
)

from .attributes import XAIAttributes
from .plugin import API_KEY_VARIABLE, BASE_URL_VARIABLES, DEFAULT_BASE_URL

MiB = 1024 * 1024

XAI = Dialect(
    "xai",
    ContentPolicy(
        "xai",
        OPENAI_COMPATIBLE,
        limits={
            "image": Accepts(formats=frozenset({"image/jpeg", "image/png"}), max_bytes=10 * MiB)
        },
        refuses=frozenset({"audio"}),
        elsewhere={
            "audio": "Audio input works with the openai and gemini providers (e.g. APIModel('gpt-4o-audio-preview'))"
        },
    ),
    max_tokens_field="max_tokens",
)

_QUOTA_WORDS = ("credits", "spending limit", "quota")


def parse_error(status: int, body: bytes, headers: Mapping[str, str]) -> ProviderErrorInfo:
    """xAI's bodies: ``{"code": ..., "error": "..."}``; a 429 about credits or spending
    limits is a quota error (waiting does not help)."""
    info = parse_error_body(status, body, headers)
    if status == 429 and any(word in info.message.lower() for word in _QUOTA_WORDS):
        return attrs.evolve(info, quota=True)
    return info


def rules_for(model: str) -> ModelRules:
    if model.startswith("grok-3-mini"):
        return ModelRules(reasoning_model=True, efforts=("low", "high"), stop=False)
    if model.startswith("grok-4") and "non-reasoning" not in model:
        # grok-4 reasons always and refuses reasoning_effort, stop and penalties.
        return ModelRules(reasoning_model=True, stop=False)
    return ModelRules()


async def create(attributes: XAIAttributes) -> ChatCompletionsModel:
    key = resolve_api_key(XAI.provider, attributes.api_key, [API_KEY_VARIABLE])
    client = make_client(
        attributes,
        provider=XAI.provider,
        base_url=attributes.base_url or environment_base_url(BASE_URL_VARIABLES, DEFAULT_BASE_URL),
        api_key=key,
        parse_error=parse_error,
    )
    return ChatCompletionsModel(
        model=attributes.model,
        client=client,
        dialect=XAI,
        rules=rules_for(attributes.model),
        extra_body=attributes.extra_body,
        strict_output=attributes.strict_output,
    )
