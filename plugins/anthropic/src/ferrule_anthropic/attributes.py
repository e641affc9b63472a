"""What ``define("anthropic_language_model", name, attrs)`` takes (imported when one is defined,
not by the plugin's hook module: a cold start builds no class it does not use)."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kit.models.providerspec import ProviderAttributes


@attrs.frozen
class AnthropicAttributes(ProviderAttributes):
    """What ``define`` takes (`ProviderAttributes` and ``max_tokens``). The key comes from
    here or ``ANTHROPIC_API_KEY``; ``base_url`` defaults to ``https://api.anthropic.com``.
    A failed request (408, 409, 429, 5xx, 529, connection failures) is retried; a long
    reply that is thinking sends ``ping`` events, so ``read_timeout`` does not end it."""

    #: The output cap sent when a request gives none (Anthropic requires one).
    max_tokens: int = 4096
    #: More request fields, sent as given (``top_k``, ``context_management``...).
    extra_body: dict[str, Any] = attrs.field(factory=dict)
