"""Registers `xai_language_model` (alias `grok_language_model`) and answers which model ids
it serves. Imports nothing heavy: the component is built by `ferrule_xai.model`."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kit.models.lmspec import ProviderModels, language_model_type

COMPONENT_TYPE = "xai_language_model"
PROVIDERS = frozenset({"xai", "grok"})
API_KEY_VARIABLE = "XAI_API_KEY"
DEFAULT_BASE_URL = "https://api.x.ai/v1"
#: Moves the endpoint when no base_url is given (xAI's SDK speaks gRPC and reads none;
#: this is the name OpenAI-style clients of xAI use).
BASE_URL_VARIABLES = ("XAI_BASE_URL",)

#: The ids agent-guide.txt lists for Grok (most are retired by now: xAI's own error then
#: reaches the user as a typed error).
MODEL_IDS = frozenset(
    {
        "grok-4",
        "grok-4-0709",
        "grok-3",
        "grok-3-fast",
        "grok-3-mini",
        "grok-3-mini-fast",
        "grok-2",
        "grok-2-1212",
        "grok-2-vision-1212",
        "grok-2-image-1212",
    }
)
MODEL_PREFIX = "grok-"
MODELS = ProviderModels(COMPONENT_TYPE, PROVIDERS, prefixes=(MODEL_PREFIX,), ids=MODEL_IDS)


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    model = language_model_type(
        COMPONENT_TYPE,
        "ferrule_xai.model:create",
        "ferrule_xai.attributes:XAIAttributes",
        aliases=("grok_language_model",),
        description="xAI Grok models through xAI's OpenAI-compatible Chat Completions API (streamed).",
    )
    return [model]


@hookimpl
def ferrule_resolve_api_model(model_id: str, provider: str | None) -> Any:
    return MODELS.route(model_id, provider)
