"""vLLM under Agno's name (``from ferrule.models.vllm import VLLM``): an `OpenAILike` model
of a vLLM server (``vllm serve``), ``base_url`` defaulting to vLLM's
``http://localhost:8000/v1``."""

from __future__ import annotations

from typing import Any

import attrs

from .openai import OpenAILike

__all__ = ["VLLM"]


@attrs.frozen(init=False)
class VLLM(OpenAILike):
    """``VLLM(id="Qwen/Qwen3-8B")``; ``api_key`` only if the server was started with one."""

    def __init__(
        self,
        id: str,
        *,
        base_url: str = "http://localhost:8000/v1",
        api_key: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(id, base_url=base_url, api_key=api_key, options=options)
