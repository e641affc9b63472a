"""The OpenAI component: the shared Chat Completions translator (`ferrule_kit.models.chat_completions`)
plus OpenAI's auth headers, content policy and model rules."""

from __future__ import annotations

import os
import re

from ferrule_kit.content.parts import OPENAI as OPENAI_DIALECT
from ferrule_kit.content.parts import OPENAI_COMPATIBLE
from ferrule_kit.content.policy import Accepts, ContentPolicy
from ferrule_kit.models.chat_completions import (
    MEDIA_LIMITS,
    ChatCompletionsModel,
    Dialect,
    ModelRules,
    make_client,
)
from ferrule_kit.network.http import HTTPClient, resolve_api_key

from .attributes import OpenAIAttributes
from .plugin import API_KEY_VARIABLE, DEFAULT_BASE_URL, PROVIDER

MiB = 1024 * 1024

#: OpenAI's API: images as base64 or URL (PNG, JPEG, WEBP, GIF), audio as wav/mp3, and
#: documents (PDF as a ``file`` part, plain text as text) up to its 32 MB per request.
OPENAI = Dialect(
    PROVIDER,
    ContentPolicy(
        PROVIDER,
        OPENAI_DIALECT,
        limits={
            **MEDIA_LIMITS,
            "document": Accepts(
                formats=frozenset({"application/pdf", "text/plain"}), max_bytes=32 * MiB
            ),
        },
    ),
    max_tokens_field="max_completion_tokens",
)
#: Another server speaking the same API: it decides what it takes (documents go as their
#: text); ``max_tokens`` is the field every compatible server reads.
COMPATIBLE = Dialect(
    "openai-compatible",
    ContentPolicy("openai-compatible", OPENAI_COMPATIBLE, limits=MEDIA_LIMITS),
    max_tokens_field="max_tokens",
)

_REASONING_ID = re.compile(r"^(o\d|gpt-5)(?!.*chat)")


def is_reasoning_model(model: str) -> bool:
    """o1, o3, o4-mini, gpt-5... (not gpt-5-chat-latest, a chat model)."""
    return bool(_REASONING_ID.match(model))


def rules_for(model: str, *, official: bool, reasoning_model: bool | None) -> ModelRules:
    if reasoning_model is None:
        reasoning_model = official and is_reasoning_model(model)
    if reasoning_model:
        efforts = (
            ("minimal", "low", "medium", "high")
            if model.startswith("gpt-5")
            else ("low", "medium", "high")
        )
        return ModelRules(
            reasoning_model=True,
            efforts=efforts,
            system_role="developer",
            sampling=False,
            stop=False,
        )
    if official:
        return ModelRules()  # OpenAI's chat models refuse reasoning_effort
    # A compatible server gets reasoning_effort whenever reasoning is asked for: it is the
    # Chat Completions switch (vLLM's gpt-oss, another ferrule serve read it).
    return ModelRules(efforts=("low", "medium", "high"), default_effort="medium")


def _official_base_url() -> str:
    # OPENAI_BASE_URL moves OpenAI's endpoint (a proxy, a gateway), as in the official SDK.
    return (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def connect(attributes: OpenAIAttributes) -> tuple[HTTPClient, bool]:
    """The component's client, and whether it talks to OpenAI's own API (the Chat
    Completions and the Responses components share this)."""
    official_url = _official_base_url()
    base_url = (attributes.base_url or official_url).rstrip("/")
    official = base_url in (official_url, DEFAULT_BASE_URL)
    if official:
        key = resolve_api_key(PROVIDER, attributes.api_key, [API_KEY_VARIABLE])
    else:
        key = attributes.api_key  # never an OpenAI key from the environment to another host
    headers = {}
    if attributes.organization:
        headers["OpenAI-Organization"] = attributes.organization
    if attributes.project:
        headers["OpenAI-Project"] = attributes.project
    client = make_client(
        attributes,
        provider=(OPENAI if official else COMPATIBLE).provider,
        base_url=base_url,
        api_key=key,
        headers=headers,
    )
    return client, official


async def create(attributes: OpenAIAttributes) -> ChatCompletionsModel:
    client, official = connect(attributes)
    return ChatCompletionsModel(
        model=attributes.model,
        client=client,
        dialect=OPENAI if official else COMPATIBLE,
        rules=rules_for(
            attributes.model, official=official, reasoning_model=attributes.reasoning_model
        ),
        extra_body=attributes.extra_body,
        strict_output=attributes.strict_output,
    )
