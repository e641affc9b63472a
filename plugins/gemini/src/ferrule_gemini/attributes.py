"""What ``define("gemini_language_model", name, attrs)`` takes (imported when one is defined,
not by the plugin's hook module: a cold start builds no class it does not use)."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kit.models.providerspec import ProviderAttributes


@attrs.frozen
class GeminiAttributes(ProviderAttributes):
    """What ``define`` takes (`ProviderAttributes`). The key comes from here,
    ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``; ``base_url`` defaults to
    ``https://generativelanguage.googleapis.com/v1beta``. A failed request (408, 409, 429
    but a daily quota, 5xx, connection failures) is retried; a 429's ``retryDelay`` is
    honoured."""

    #: More ``generationConfig`` fields (``topK``, ``seed``...), sent as given.
    generation_config: dict[str, Any] = attrs.field(factory=dict)
    #: More request fields (``safetySettings``, ``cachedContent``...), sent as given.
    extra_body: dict[str, Any] = attrs.field(factory=dict)
