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
    #: The text of a user turn added to a conversation that ends with the model's own turn
    #: (Claude 4.6 and later refuse to continue it); None: the conversation as it is.
    #: The server tools (Anthropic runs them: web search, code execution, the advisor...)
    #: a request may carry, by type (``web_search``: every version; ``web_search_20250305``:
    #: that one); None: any the caller gives, an empty list: none. A host policy: the
    #: requests' own tools never widen it.
    server_tools: list[str] | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(
            attrs.validators.deep_iterable(attrs.validators.instance_of(str))
        ),
    )
    trailing_user_message: str | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(
            [attrs.validators.instance_of(str), attrs.validators.min_len(1)]
        ),
    )
