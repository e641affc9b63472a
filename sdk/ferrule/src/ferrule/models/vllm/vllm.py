"""vLLM under Agno's name (``from ferrule.models.vllm.vllm import VLLM``): an `OpenAILike` model
of a vLLM server (``vllm serve``), ``base_url`` defaulting to vLLM's
``http://localhost:8000/v1``."""

from __future__ import annotations

import attrs
from typing_extensions import Unpack

from ..openai.chat import ChatParams
from ..openai.like import OpenAILike

__all__ = ["VLLM"]


@attrs.frozen(init=False)
class VLLM(OpenAILike):
    """``VLLM(id="Qwen/Qwen3-8B", temperature=0.7)``, with `OpenAIChat`'s keywords;
    ``api_key`` only if the server was started with one."""

    def __init__(self, id: str, **params: Unpack[ChatParams]) -> None:
        params.setdefault("base_url", "http://localhost:8000/v1")
        self._init_chat(id, "openai", params)
