"""OpenAI models under Agno's names (``from ferrule.models.openai import OpenAIChat``).

`OpenAIChat` is an `APIModel` of the provider ``openai`` (ferrule-openai): OpenAI's Chat
Completions API. The key comes from ``api_key``, ``$OPENAI_API_KEY`` or ``ferrule keys set
openai``; the endpoint from ``base_url``, else ``$OPENAI_BASE_URL`` (as in OpenAI's SDK),
else OpenAI's. `OpenAILike` is the same provider pointed at any OpenAI-compatible server
(vLLM, llama.cpp's server, Ollama's ``/v1``, another ``ferrule serve``).
"""

from __future__ import annotations

from typing import Any

import attrs

from . import APIModel

__all__ = ["OpenAIChat", "OpenAILike"]


@attrs.frozen(init=False)
class OpenAIChat(APIModel):
    """``OpenAIChat(id="gpt-4o")``. ``organization`` and ``project`` are sent as OpenAI's
    headers; ``options`` are more attributes of the ``openai_language_model`` component
    (``read_timeout``, ``max_retries``, ``reasoning_model``, ``extra_body``)."""

    def __init__(
        self,
        id: str = "gpt-4o",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        organization: str | None = None,
        project: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        attributes = dict(options or {})
        for key, value in (("organization", organization), ("project", project)):
            if value is not None:
                attributes[key] = value
        self.__attrs_init__(id, "openai", api_key, base_url, attributes)


@attrs.frozen(init=False)
class OpenAILike(APIModel):
    """``OpenAILike(id="my-model", base_url="http://127.0.0.1:8000/v1")``: a model of an
    OpenAI-compatible server. Only the ``api_key`` given is sent to it: an OpenAI key from
    the environment never goes to a server that is not OpenAI's."""

    def __init__(
        self,
        id: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.__attrs_init__(id, "openai", api_key, base_url, dict(options or {}))
