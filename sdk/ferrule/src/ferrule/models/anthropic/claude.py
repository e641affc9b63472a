"""Anthropic's Claude under Agno's name (``from ferrule.models.anthropic import Claude``).

`Claude` is an `APIModel` of the provider ``anthropic`` (ferrule-anthropic, the Messages
API). The key comes from ``api_key``, ``$ANTHROPIC_API_KEY`` or ``ferrule keys set
anthropic``; the endpoint from ``base_url``, else ``$ANTHROPIC_BASE_URL`` (as in
Anthropic's SDK), else Anthropic's.
"""

from __future__ import annotations

from typing import Any

import attrs

from . import APIModel

__all__ = ["Claude"]


@attrs.frozen(init=False)
class Claude(APIModel):
    """``Claude(id="claude-sonnet-4-20250514")``. ``max_tokens`` is the reply cap sent when
    a request sets none (Anthropic requires one); ``options`` are more attributes of the
    ``anthropic_language_model`` component (``read_timeout``, ``max_retries``)."""

    def __init__(
        self,
        id: str = "claude-sonnet-4-20250514",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        attributes = dict(options or {})
        if max_tokens is not None:
            attributes["max_tokens"] = max_tokens
        self.__attrs_init__(id, "anthropic", api_key, base_url, attributes)
