"""llama.cpp under Agno's name (``from ferrule.models.llama_cpp.llama_cpp import LlamaCpp``).

Agno's ``LlamaCpp`` is an `OpenAILike` client of llama.cpp's server (``llama-server``,
``http://127.0.0.1:8080/v1`` by default); ferrule's is too, with one difference: at that
default address, with no server needed, it runs llama.cpp in this process (ferrule-llamacpp's
``llamacpp_language_model``), on the model ``id`` names (a weights-table id, a Hugging Face
GGUF repository ``owner/repo[:QUANT]`` or a ``.gguf`` path; ``$FERRULE_MODEL_ALIASES``
applies). Any other ``base_url`` is a running server, reached as `OpenAILike` reaches one.
`OpenAIChat`'s sampling keywords (``temperature``, ``top_p``, ``max_tokens``, ``stop``...)
apply either way; ``options`` are more attributes of the in-process component (``n_ctx``,
``n_threads``, ``download``...).
"""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.models.lmspec import ModelRoute, resolve_model_alias
from typing_extensions import Unpack

from ..openai.chat import ChatParams, chat_params
from ..openai.like import NOT_PROVIDED, OpenAILike
from ..params import agno_signature

__all__ = ["LlamaCpp"]

COMPONENT_TYPE = "llamacpp_language_model"
#: Where Agno's LlamaCpp looks for llama.cpp's server: here, llama.cpp in this process.
DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"
#: The request fields in-process llama.cpp takes (as its component's attributes).
IN_PROCESS_FIELDS = frozenset({"seed", "presence_penalty", "top_k", "min_p", "repeat_penalty"})
LLAMA_CPP_PARAMS = chat_params(
    "LlamaCpp", "LlamaCpp", base_url=DEFAULT_BASE_URL, api_key=NOT_PROVIDED
)


@attrs.frozen(init=False)
class LlamaCpp(OpenAILike):
    """``LlamaCpp(id="Qwen/Qwen3-0.6B")``: llama.cpp in this process; with another
    ``base_url``, a running ``llama-server``."""

    AGNO_PARAMS = LLAMA_CPP_PARAMS

    def __init__(self, id: str = "ggml-org/gpt-oss-20b-GGUF", **params: Unpack[ChatParams]) -> None:
        self._init_chat(id, dict(params))
        if self.in_process:
            sent = set(self.options.get("extra_body", {}))
            if self.options.get("extra_body", {}).get("modalities") == ["text"]:
                sent.discard("modalities")  # text only: what it answers in anyway
            refused = sorted(sent - IN_PROCESS_FIELDS)
            if refused:
                raise InvalidInputError(
                    f"llama.cpp in this process takes no {refused[0]!r}; it takes "
                    f"{', '.join(sorted(IN_PROCESS_FIELDS))} (or give base_url= of a llama-server)",
                    field=refused[0],
                )

    @property
    def in_process(self) -> bool:
        """Whether llama.cpp runs in this process (no server address given)."""
        return self.base_url in (None, DEFAULT_BASE_URL)

    def route(self, kernel: Kernel) -> ModelRoute:
        if not self.in_process:
            return super().route(kernel)
        attributes: dict[str, Any] = {
            k: v for k, v in self.options.items() if k not in ("extra_body", "extra_headers")
        }
        attributes.update(self.options.get("extra_body", {}))
        # In process a schema is always a grammar, as llama-server makes of ``strict: false``.
        for key in (
            "read_timeout",
            "max_retries",
            "retry_delay",
            "retry_multiplier",
            "strict_output",
            "modalities",
        ):
            attributes.pop(key, None)
        return ModelRoute(COMPONENT_TYPE, {"model": resolve_model_alias(self.id), **attributes})


LlamaCpp.__init__.__signature__ = agno_signature(LLAMA_CPP_PARAMS, "ggml-org/gpt-oss-20b-GGUF")  # type: ignore[attr-defined]
