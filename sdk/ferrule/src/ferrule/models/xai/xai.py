"""xAI's Grok under Agno's name (``from ferrule.models.xai.xai import xAI``).

`xAI` is an `APIModel` of the provider ``xai`` (ferrule-xai, xAI's OpenAI-compatible API),
with `OpenAIChat`'s keywords (``temperature``, ``max_tokens``, ``seed``, ``extra_body``...).
The key comes from ``api_key``, ``$XAI_API_KEY`` or ``ferrule keys set xai``; the endpoint
from ``base_url``, else ``$XAI_BASE_URL``, else ``https://api.x.ai/v1``.
"""

from __future__ import annotations

import attrs
from typing_extensions import Unpack

from ..openai.chat import ChatParams, OpenAIChat

__all__ = ["xAI"]


@attrs.frozen(init=False)
class xAI(OpenAIChat):
    """``xAI(id="grok-4", temperature=0.5)``."""

    def __init__(self, id: str = "grok-4", **params: Unpack[ChatParams]) -> None:
        self._init_chat(id, "xai", params)
