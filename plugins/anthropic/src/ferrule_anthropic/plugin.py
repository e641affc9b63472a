"""Registers `anthropic_language_model` (alias `claude_language_model`) and answers which
model ids it serves. Imports nothing heavy: the component lives in
`ferrule_anthropic.model`, imported when one is defined."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kit.models.lmspec import ProviderModels, language_model_type

COMPONENT_TYPE = "anthropic_language_model"
PROVIDERS = frozenset({"anthropic", "claude"})
MODEL_PREFIX = "claude-"
API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
MODELS = ProviderModels(COMPONENT_TYPE, PROVIDERS, prefixes=(MODEL_PREFIX,))


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    model = language_model_type(
        COMPONENT_TYPE,
        "ferrule_anthropic.model:create",
        "ferrule_anthropic.attributes:AnthropicAttributes",
        aliases=("claude_language_model",),
        description="Claude models through Anthropic's Messages API (streamed).",
        counts_tokens=True,
    )
    return [model]


@hookimpl
def ferrule_resolve_api_model(model_id: str, provider: str | None) -> Any:
    return MODELS.route(model_id, provider)
