"""Registers the ``test_language_model`` component type, and the local model id ``test``."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import hookimpl
from ferrule_kit.models.lmspec import language_model_type

#: ``LocalModel("test")`` (and ``ferrule chat -m test``) resolve to the echoing test model.
MODEL_ID = "test"


@hookimpl
def ferrule_register_component_types() -> list[Any]:
    return [
        language_model_type(
            "test_language_model",
            "ferrule_testmodel.model:TestLanguageModel",
            "ferrule_testmodel.script:TestModelAttributes",
            description="A deterministic language model replying from a script or a function, for tests.",
            # the attributes take text as a string or its exact pieces (a union the wire
            # converter lacks)
            converter="ferrule_testmodel.script:converter",
            counts_tokens=True,
        )
    ]


@hookimpl
def ferrule_resolve_local_model(model_id: str) -> Any:
    if model_id != MODEL_ID:
        return None
    from ferrule_kit.models.lmspec import ModelRoute

    return ModelRoute("test_language_model", {})
