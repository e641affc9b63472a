"""Ollama over OpenAI's Responses API under Agno's name (``from
ferrule.models.ollama.responses import OllamaResponses``): an `OpenResponses` model on
Ollama's ``{host}/v1/responses`` (Ollama 0.13.3 and later). The server is found as
`Ollama`'s (``host``, ``$OLLAMA_HOST``, ``http://localhost:11434``); ``api_key``, else
``$OLLAMA_API_KEY``, is the only key sent to it (an Ollama Cloud key; a local server needs
none)."""

from __future__ import annotations

import os
from typing import Any

import attrs
from typing_extensions import Unpack

from ..openai.open_responses import OpenResponses
from ..openai.responses import ResponsesParams, responses_params
from ..params import AgnoParam, agno_signature
from .chat import ollama_base_url

__all__ = ["OllamaResponses"]


class OllamaResponsesParams(ResponsesParams, total=False):
    host: str | None


OLLAMA_RESPONSES_PARAMS: tuple[AgnoParam, ...] = (
    *responses_params("OllamaResponses", "Ollama", store=False),
    AgnoParam("host"),
)


@attrs.frozen(init=False)
class OllamaResponses(OpenResponses):
    """``OllamaResponses(id="gpt-oss:20b")``, with `OpenAIResponses`' keywords but
    ``base_url`` (``host`` names the server)."""

    AGNO_PARAMS = OLLAMA_RESPONSES_PARAMS

    def __init__(self, id: str = "gpt-oss:20b", **params: Unpack[OllamaResponsesParams]) -> None:
        given: dict[str, Any] = dict(params)
        given["base_url"] = ollama_base_url(given.get("host"))
        if given.get("api_key") is None and os.environ.get("OLLAMA_API_KEY"):
            given["api_key"] = os.environ["OLLAMA_API_KEY"]
        self._init_responses(id, given)


OllamaResponses.__init__.__signature__ = agno_signature(OLLAMA_RESPONSES_PARAMS, "gpt-oss:20b")  # type: ignore[attr-defined]
