"""Registers the ``llamacpp_language_model`` component type (also reachable as
``local_language_model`` and ``tvm_language_model``), the model-management operators,
and answers which backend runs a local model id.

Descriptions only: llama_cpp and huggingface_hub are imported when a component is
defined or an operator called, and this package's own modules (pathlib, shutil, the
weights table) when a model is first routed or a schema listed, never at a cold start.
"""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec, OperatorSpec, hookimpl
from ferrule_kit.models.lmspec import ModelRoute, language_model_type

COMPONENT_TYPE = "llamacpp_language_model"


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        language_model_type(
            COMPONENT_TYPE,
            "ferrule_llamacpp.backend:LlamaCppLanguageModel",
            "ferrule_llamacpp.attributes:LlamaCppAttributes",
            aliases=("local_language_model", "tvm_language_model"),
            description="A GGUF model on llama.cpp (CPU): Qwen3 with tools and thinking, "
            "other chat models through their own chat template. Decodes up to `parallel` "
            "requests at once in shared batches (default 4); more wait in line, in order.",
            counts_tokens=True,
        )
    ]


@hookimpl
def ferrule_register_operators() -> list[OperatorSpec]:
    return [
        OperatorSpec(
            "list_local_models",
            "ferrule_llamacpp.manage:list_local_models",
            "ferrule_llamacpp.manage:ModelListInput",
            description="The local models this machine has (all known ones with all=true).",
        ),
        OperatorSpec(
            "download_model",
            "ferrule_llamacpp.manage:download_model",
            "ferrule_llamacpp.manage:ModelInput",
            description="Download a model's GGUF file into the Hugging Face cache.",
        ),
        OperatorSpec(
            "prepare_model",
            "ferrule_llamacpp.manage:prepare_model",
            "ferrule_llamacpp.manage:ModelInput",
            streaming=True,
            description="download_model, streamed: bytes downloaded of each file, then the "
            "model's entry (a file already here is ready at once).",
        ),
        OperatorSpec(
            "remove_model",
            "ferrule_llamacpp.manage:remove_model",
            "ferrule_llamacpp.manage:ModelInput",
            description="Remove a model's GGUF file from the Hugging Face cache.",
        ),
    ]


@hookimpl
def ferrule_resolve_local_model(model_id: str) -> ModelRoute | None:
    from . import weights

    if weights.is_known(model_id):
        return ModelRoute(COMPONENT_TYPE, {"model": model_id})
    return None
