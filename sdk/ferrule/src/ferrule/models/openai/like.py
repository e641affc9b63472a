"""Any OpenAI-compatible server under Agno's name (``from ferrule.models.openai.like import
OpenAILike``)."""

from __future__ import annotations

from typing import Any

import attrs
from typing_extensions import Unpack

from ..params import agno_signature
from .chat import ChatParams, OpenAIChat, chat_params

__all__ = ["NOT_PROVIDED", "OpenAILike"]

#: Agno's stand-in for "no key": none is sent.
NOT_PROVIDED = "not-provided"

LIKE_PARAMS = chat_params("OpenAILike", "OpenAI", api_key=NOT_PROVIDED)


@attrs.frozen(init=False)
class OpenAILike(OpenAIChat):
    """``OpenAILike(id="my-model", base_url="http://127.0.0.1:8000/v1")``: a model of an
    OpenAI-compatible server (vLLM, llama.cpp's server, Ollama's ``/v1``, another ``ferrule
    serve``), with `OpenAIChat`'s keywords. Only the ``api_key`` given is sent to it: an
    OpenAI key from the environment never goes to a server that is not OpenAI's."""

    AGNO_PARAMS = LIKE_PARAMS

    def __init__(self, id: str = NOT_PROVIDED, **params: Unpack[ChatParams]) -> None:
        self._init_chat(id, dict(params))

    def _init_chat(self, id: str, params: dict[str, Any]) -> None:
        super()._init_chat(id, params)
        if self.api_key == NOT_PROVIDED:
            object.__setattr__(self, "api_key", None)


OpenAILike.__init__.__signature__ = agno_signature(LIKE_PARAMS, NOT_PROVIDED)  # type: ignore[attr-defined]
