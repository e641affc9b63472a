"""Any OpenAI-compatible server under Agno's name (``from ferrule.models.openai.like import
OpenAILike``)."""

from __future__ import annotations

import attrs
from typing_extensions import Unpack

from .chat import ChatParams, OpenAIChat

__all__ = ["OpenAILike"]


@attrs.frozen(init=False)
class OpenAILike(OpenAIChat):
    """``OpenAILike(id="my-model", base_url="http://127.0.0.1:8000/v1")``: a model of an
    OpenAI-compatible server (vLLM, llama.cpp's server, Ollama's ``/v1``, another ``ferrule
    serve``), with `OpenAIChat`'s keywords. Only the ``api_key`` given is sent to it: an
    OpenAI key from the environment never goes to a server that is not OpenAI's."""

    def __init__(self, id: str = "not-provided", **params: Unpack[ChatParams]) -> None:
        self._init_chat(id, "openai", params)
