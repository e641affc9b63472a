"""xAI's Grok under Agno's name (``from ferrule.models.xai import xAI``).

`xAI` is an `APIModel` of the provider ``xai`` (ferrule-xai, xAI's OpenAI-compatible API).
The key comes from ``api_key``, ``$XAI_API_KEY`` or ``ferrule keys set xai``; the endpoint
from ``base_url``, else ``$XAI_BASE_URL``, else ``https://api.x.ai/v1``.
"""

from __future__ import annotations

from typing import Any

import attrs

from . import APIModel

__all__ = ["xAI"]


@attrs.frozen(init=False)
class xAI(APIModel):
    """``xAI(id="grok-4")``; ``options`` are more attributes of the ``xai_language_model``
    component (``read_timeout``, ``max_retries``, ``extra_body``)."""

    def __init__(
        self,
        id: str = "grok-4",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.__attrs_init__(id, "xai", api_key, base_url, dict(options or {}))
