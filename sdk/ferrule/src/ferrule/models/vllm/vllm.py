"""vLLM under Agno's name (``from ferrule.models.vllm.vllm import VLLM``): an `OpenAILike` model
of a vLLM server (``vllm serve``): ``base_url``, else ``$VLLM_BASE_URL``, else vLLM's
``http://localhost:8000/v1``; ``api_key``, else ``$VLLM_API_KEY`` (as Agno's). Agno's own
sampling defaults apply (``temperature=0.7``, ``top_p=0.8``, ``presence_penalty=1.5``)."""

from __future__ import annotations

import os
from typing import Any

import attrs
from typing_extensions import Unpack

from ..openai.chat import ChatParams, chat_params
from ..openai.like import OpenAILike
from ..params import AgnoParam, agno_signature

__all__ = ["VLLM"]

DEFAULT_BASE_URL = "http://localhost:8000/v1"


class VLLMParams(ChatParams, total=False):
    top_k: int | None
    enable_thinking: bool | None


VLLM_PARAMS: tuple[AgnoParam, ...] = (
    *chat_params(
        "VLLM",
        "VLLM",
        api_key=None,
        base_url=None,
        temperature=0.7,
        top_p=0.8,
        presence_penalty=1.5,
    ),
    AgnoParam("top_k"),
    AgnoParam("enable_thinking"),
)


@attrs.frozen(init=False)
class VLLM(OpenAILike):
    """``VLLM(id="Qwen/Qwen3-8B", temperature=0.7)``, with `OpenAIChat`'s keywords;
    ``api_key`` only if the server was started with one. vLLM's own sampling keywords go in
    the request body as vLLM reads them: ``top_k``, and ``enable_thinking`` as
    ``chat_template_kwargs.enable_thinking`` (a Qwen3 template's switch)."""

    AGNO_PARAMS = VLLM_PARAMS

    def __init__(self, id: str = "not-set", **params: Unpack[VLLMParams]) -> None:
        given: dict[str, Any] = dict(params)
        if given.get("base_url") is None:
            given["base_url"] = os.environ.get("VLLM_BASE_URL") or DEFAULT_BASE_URL
        if given.get("api_key") is None and os.environ.get("VLLM_API_KEY"):
            given["api_key"] = os.environ["VLLM_API_KEY"]
        extra = dict(given.get("extra_body") or {})
        if given.get("top_k") is not None:
            extra["top_k"] = given["top_k"]
        if given.get("enable_thinking") is not None:
            template = dict(extra.get("chat_template_kwargs") or {})
            template["enable_thinking"] = given["enable_thinking"]
            extra["chat_template_kwargs"] = template
        if extra:
            given["extra_body"] = extra
        self._init_chat(id, given)


VLLM.__init__.__signature__ = agno_signature(VLLM_PARAMS, "not-set")  # type: ignore[attr-defined]
