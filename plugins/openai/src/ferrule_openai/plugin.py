"""Registers `openai_language_model` and answers which model ids it serves. Imports nothing
heavy: the component is built by `ferrule_openai.model`, imported when one is defined."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kit.models.lmspec import ProviderModels, language_model_type

from .embedspec import EMBEDDER_TYPE, embedder_types

COMPONENT_TYPE = "openai_language_model"
#: OpenAI's models over the Responses API: a component of its own (another request and
#: stream shape, and attributes of its own), reached by naming this provider.
RESPONSES_COMPONENT_TYPE = "openai_responses_language_model"
PROVIDER = "openai"
RESPONSES_PROVIDER = "openai-responses"
API_KEY_VARIABLE = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"

#: The ids agent-guide.txt lists for OpenAI (several are retired by now: the API's own
#: error then reaches the user as `ModelNotFoundError`).
MODEL_IDS = frozenset(
    {
        "o4-mini",
        "o3",
        "o3-pro",
        "o3-mini",
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4.1",
        "gpt-4.1-mini",
        "gpt-4.1-nano",
    }
)
MODEL_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4")
#: Embedding model ids served by `openai_embedder` with no provider named.
EMBEDDING_MODEL_PREFIXES = ("text-embedding-3-", "text-embedding-ada-")
MODELS = ProviderModels(COMPONENT_TYPE, (PROVIDER,), prefixes=MODEL_PREFIXES, ids=MODEL_IDS)
#: The Responses API only when asked for by its provider name: it claims no id.
RESPONSES_MODELS = ProviderModels(RESPONSES_COMPONENT_TYPE, (RESPONSES_PROVIDER,))
EMBEDDING_MODELS = ProviderModels(EMBEDDER_TYPE, (PROVIDER,), prefixes=EMBEDDING_MODEL_PREFIXES)


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    model = language_model_type(
        COMPONENT_TYPE,
        "ferrule_openai.model:create",
        "ferrule_openai.attributes:OpenAIAttributes",
        description="OpenAI models through the Chat Completions API (streamed), or any "
        "OpenAI-compatible server through base_url.",
    )
    return [
        model,
        language_model_type(
            RESPONSES_COMPONENT_TYPE,
            "ferrule_openai.responses_model:create",
            "ferrule_openai.attributes:OpenAIResponsesAttributes",
            description="OpenAI models through the Responses API (streamed; reasoning items "
            "kept across turns as encrypted content), or a server speaking it through base_url.",
        ),
        *embedder_types(),
    ]


@hookimpl
def ferrule_resolve_api_model(model_id: str, provider: str | None) -> Any:
    return RESPONSES_MODELS.route(model_id, provider) or MODELS.route(model_id, provider)


@hookimpl
def ferrule_resolve_embedder(model_id: str, provider: str | None) -> Any:
    return EMBEDDING_MODELS.route(model_id, provider)
