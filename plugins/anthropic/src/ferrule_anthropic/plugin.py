"""Registers `anthropic_language_model` (alias `claude_language_model`) and answers which
model ids it serves. Imports nothing heavy: the component lives in
`ferrule_anthropic.model`, imported when one is defined."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kit.lmspec import api_model_route, language_model_type
from ferrule_kit.providerspec import ProviderAttributes

COMPONENT_TYPE = "anthropic_language_model"
PROVIDERS = frozenset({"anthropic", "claude"})
MODEL_PREFIX = "claude-"
API_KEY_VARIABLE = "ANTHROPIC_API_KEY"


@attrs.frozen
class AnthropicAttributes(ProviderAttributes):
    """What ``define`` takes (`ProviderAttributes` and ``max_tokens``). The key comes from
    here or ``ANTHROPIC_API_KEY``; ``base_url`` defaults to ``https://api.anthropic.com``.
    A failed request (408, 409, 429, 5xx, 529, connection failures) is retried; a long
    reply that is thinking sends ``ping`` events, so ``read_timeout`` does not end it."""

    #: The output cap sent when a request gives none (Anthropic requires one).
    max_tokens: int = 4096


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        language_model_type(
            COMPONENT_TYPE,
            "ferrule_anthropic.model:create",
            AnthropicAttributes,
            aliases=("claude_language_model",),
            description="Claude models through Anthropic's Messages API (streamed).",
        )
    ]


@hookimpl
def ferrule_resolve_api_model(model_id: str, provider: str | None) -> Any:
    return api_model_route(
        COMPONENT_TYPE,
        model_id,
        provider,
        providers=PROVIDERS,
        claimed=model_id.startswith(MODEL_PREFIX),
    )
