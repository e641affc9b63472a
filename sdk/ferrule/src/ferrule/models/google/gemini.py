"""Google's Gemini under Agno's name (``from ferrule.models.google import Gemini``).

`Gemini` is an `APIModel` of the provider ``gemini`` (ferrule-gemini, the Gemini API's
``streamGenerateContent``). The key comes from ``api_key``, ``$GEMINI_API_KEY``,
``$GOOGLE_API_KEY`` or ``ferrule keys set gemini``; the endpoint from ``base_url``, else
``$GOOGLE_GEMINI_BASE_URL`` (as in Google's SDK: a host, the API version added) or
``$GEMINI_BASE_URL``, else Google's.
"""

from __future__ import annotations

from typing import Any

import attrs

from . import APIModel

__all__ = ["Gemini"]


@attrs.frozen(init=False)
class Gemini(APIModel):
    """``Gemini(id="gemini-2.5-flash")``; ``options`` are more attributes of the
    ``gemini_language_model`` component (``read_timeout``, ``max_retries``)."""

    def __init__(
        self,
        id: str = "gemini-2.5-flash",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.__attrs_init__(id, "gemini", api_key, base_url, dict(options or {}))
