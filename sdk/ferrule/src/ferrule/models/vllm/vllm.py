"""vLLM under Agno's name (``from ferrule.models.vllm.vllm import VLLM``): an `OpenAILike` model
of a vLLM server (``vllm serve``): ``base_url``, else ``$VLLM_BASE_URL``, else vLLM's
``http://localhost:8000/v1``; ``api_key``, else ``$VLLM_API_KEY`` (as Agno's)."""

from __future__ import annotations

import os

import attrs
from typing_extensions import Unpack

from ..openai.chat import ChatParams
from ..openai.like import OpenAILike

__all__ = ["VLLM"]

DEFAULT_BASE_URL = "http://localhost:8000/v1"


@attrs.frozen(init=False)
class VLLM(OpenAILike):
    """``VLLM(id="Qwen/Qwen3-8B", temperature=0.7)``, with `OpenAIChat`'s keywords;
    ``api_key`` only if the server was started with one. vLLM's own sampling keywords go in
    the request body as vLLM reads them: ``top_k``, and ``enable_thinking`` as
    ``chat_template_kwargs.enable_thinking`` (a Qwen3 template's switch)."""

    def __init__(
        self,
        id: str,
        *,
        top_k: int | None = None,
        enable_thinking: bool | None = None,
        **params: Unpack[ChatParams],
    ) -> None:
        if params.get("base_url") is None:
            params["base_url"] = os.environ.get("VLLM_BASE_URL") or DEFAULT_BASE_URL
        if params.get("api_key") is None and os.environ.get("VLLM_API_KEY"):
            params["api_key"] = os.environ["VLLM_API_KEY"]
        extra = dict(params.get("extra_body") or {})
        if top_k is not None:
            extra["top_k"] = top_k
        if enable_thinking is not None:
            template = dict(extra.get("chat_template_kwargs") or {})
            template["enable_thinking"] = enable_thinking
            extra["chat_template_kwargs"] = template
        if extra:
            params["extra_body"] = extra
        self._init_chat(id, "openai", params)
