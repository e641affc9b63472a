"""Ollama over OpenAI's Responses API under Agno's name (``from
ferrule.models.ollama.responses import OllamaResponses``): an `OpenAIResponses` model on
Ollama's ``{host}/v1/responses`` (Ollama 0.13.3 and later). The server is found as
`Ollama`'s (``host``, ``$OLLAMA_HOST``, ``http://localhost:11434``); ``api_key``, else
``$OLLAMA_API_KEY``, is the only key sent to it (an Ollama Cloud key; a local server needs
none)."""

from __future__ import annotations

import os

import attrs
from typing_extensions import Unpack

from ..openai.responses import OpenAIResponses, ResponsesParams
from .chat import ollama_base_url

__all__ = ["OllamaResponses"]


@attrs.frozen(init=False)
class OllamaResponses(OpenAIResponses):
    """``OllamaResponses(id="gpt-oss:20b")``, with `OpenAIResponses`' keywords but
    ``base_url`` (``host`` names the server)."""

    def __init__(
        self, id: str, *, host: str | None = None, **params: Unpack[ResponsesParams]
    ) -> None:
        params["base_url"] = ollama_base_url(host)
        if params.get("api_key") is None and os.environ.get("OLLAMA_API_KEY"):
            params["api_key"] = os.environ["OLLAMA_API_KEY"]
        super().__init__(id, **params)
