"""The local backends by name: `LlamaCpp` (``from ferrule.models.llama_cpp.llama_cpp import LlamaCpp``).

`ferrule.LocalModel` picks the backend for a model id (exllamav2 for Qwen3 where CUDA is,
llama.cpp elsewhere); `LlamaCpp` always runs llama.cpp in this process (ferrule-llamacpp),
whatever the machine has. Unlike Agno's ``LlamaCpp``, a client of llama.cpp's HTTP server,
no server is involved; for a running ``llama-server`` use
``OpenAILike(id=..., base_url="http://127.0.0.1:8080/v1")``.
"""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import Kernel
from ferrule_kit.lmspec import DEFAULT_LOCAL_MODEL, ModelRoute, resolve_model_alias

from .. import LocalModel

__all__ = ["LlamaCpp"]

COMPONENT_TYPE = "llamacpp_language_model"


@attrs.frozen(init=False)
class LlamaCpp(LocalModel):
    """``LlamaCpp(id="Qwen/Qwen3-0.6B")``: a weights-table id, a Hugging Face GGUF
    repository (``owner/repo[:QUANT]``) or a ``.gguf`` path; ``$FERRULE_MODEL_ALIASES``
    applies. ``options``: more attributes of ``llamacpp_language_model`` (``n_ctx``,
    ``n_threads``, ``max_tokens``, ``temperature``, ``download``, ...)."""

    def __init__(self, id: str = DEFAULT_LOCAL_MODEL, **options: Any) -> None:
        self.__attrs_init__(id, options)

    def route(self, kernel: Kernel) -> ModelRoute:
        return ModelRoute(COMPONENT_TYPE, {"model": resolve_model_alias(self.id), **self.options})
