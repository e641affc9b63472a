"""xAI's Grok under Agno's name (``from ferrule.models.xai.xai import xAI``).

`xAI` is an `OpenAILike` of the provider ``xai`` (ferrule-xai, xAI's OpenAI-compatible API),
with `OpenAIChat`'s keywords (``temperature``, ``max_tokens``, ``seed``, ``extra_body``...).
The key comes from ``api_key``, ``$XAI_API_KEY`` or ``ferrule keys set xai``; the endpoint
from ``base_url`` when one other than xAI's is given, else ``$XAI_BASE_URL``, else
``https://api.x.ai/v1``. xAI's Live Search (``search_parameters``) is not used: give the
agent a search tool.
"""

from __future__ import annotations

from typing import Any

import attrs
from typing_extensions import Unpack

from ..openai.chat import ChatParams, chat_params
from ..openai.like import OpenAILike
from ..params import AgnoParam, agno_signature, declined

__all__ = ["xAI"]

DEFAULT_BASE_URL = "https://api.x.ai/v1"


class XAIParams(ChatParams, total=False):
    search_parameters: dict[str, Any] | None


XAI_PARAMS: tuple[AgnoParam, ...] = (
    *chat_params("xAI", "xAI", api_key=None, base_url=DEFAULT_BASE_URL),
    declined(
        "search_parameters",
        "xAI's Live Search is not used: give the agent a search tool (DuckDuckGoTools)",
    ),
)


@attrs.frozen(init=False)
class xAI(OpenAILike):
    """``xAI(id="grok-4", temperature=0.5)``."""

    AGNO_PARAMS = XAI_PARAMS
    ROUTE = "xai"

    def __init__(
        self, id: str = "grok-4-1-fast-non-reasoning-latest", **params: Unpack[XAIParams]
    ) -> None:
        given: dict[str, Any] = dict(params)
        if given.get("base_url") == DEFAULT_BASE_URL:
            given.pop("base_url")  # xAI's own: the plugin's default, which $XAI_BASE_URL moves
        self._init_chat(id, given)
        if self.base_url == DEFAULT_BASE_URL:
            object.__setattr__(self, "base_url", None)


xAI.__init__.__signature__ = agno_signature(XAI_PARAMS, "grok-4-1-fast-non-reasoning-latest")  # type: ignore[attr-defined]
