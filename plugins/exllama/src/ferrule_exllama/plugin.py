"""Registers the ``exllama_language_model`` component type and, where exllamav2 can run,
claims the Qwen3 model ids ahead of llama.cpp.

Descriptions only: torch and exllamav2 are imported when a component is defined (the
routing hook imports torch, to ask for a CUDA device, only if both are installed); this
package's own modules when a model is first routed or a schema listed.
"""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kit.models.lmspec import ModelRoute, language_model_type

COMPONENT_TYPE = "exllama_language_model"


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        language_model_type(
            COMPONENT_TYPE,
            "ferrule_exllama.backend:ExLlamaLanguageModel",
            "ferrule_exllama.attributes:ExLlamaAttributes",
            description="Qwen3 (EXL2 or FP16 weights) on exllamav2, on CUDA GPUs: tools, "
            "thinking, streaming, quantized KV cache, JSON-schema constrained output. "
            "Concurrent requests are batched only with flash-attn >= 2.5.7 installed (its "
            "paged attention), up to `parallel` at once and as many as `cache_tokens` "
            "holds, the rest waiting in order; without it they run one at a time, since "
            "exllamav2's unpaged generator holds one sequence.",
        )
    ]


@hookimpl(tryfirst=True)
def ferrule_resolve_local_model(model_id: str) -> ModelRoute | None:
    from . import weights
    from .hardware import cuda_status

    # Cheapest test first: only the table's Qwen3 ids are ours, and only with CUDA.
    if weights.lookup(model_id) is None or not cuda_status().usable:
        return None
    return ModelRoute(COMPONENT_TYPE, {"model": model_id})
