"""Ailoy 0.1's embedding-model component, ``tvm_embedding_model``, over an embedder of the
contract (`ferrule_kit.embedding`).

Ailoy 0.1 defines ``rt.define("tvm_embedding_model", "em0", {"model": "BAAI/bge-m3"})``
and calls ``infer({"prompt": text})`` for ``{"embedding": [...]}``. An embedder plugin
answers it by describing the type with `ferrule_kit.embedspec.ailoy_embedding_model_type`
and mixing `AiloyEmbedderMethods` into its embedder class: ``infer`` is its ``embed`` of
one text, and its ``embed`` and ``info`` are there too (one component, both protocols).

The ``model`` attribute is resolved through ``$FERRULE_MODEL_ALIASES`` and must name the
model the plugin runs (`check_model`): ``BAAI/bge-m3=all-MiniLM-L6-v2`` runs Ailoy's code
on the offline MiniLM. An aliased id keeps the width Ailoy's code sizes its stores for
(`aliased_dimension`: bge-m3's 1024): MiniLM then pads zeros after its own 384 values, which
changes no cosine, inner product or distance. `ferrule.EmbeddingModel` follows the same rule.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Literal

import attrs
from ferrule_kernel import InvalidInputError

from .embedding import EmbedInput
from .lmspec import MODEL_ALIASES_VARIABLE, resolve_model_alias

__all__ = [
    "MODEL_DIMENSIONS",
    "AiloyEmbedderMethods",
    "AiloyEmbeddingAttributes",
    "PromptInput",
    "aliased_dimension",
    "check_model",
]

#: Ailoy 0.1's default (and only) embedding model.
DEFAULT_MODEL = "BAAI/bge-m3"

#: The width of each embedding model Ailoy names (see `aliased_dimension`).
MODEL_DIMENSIONS = {"BAAI/bge-m3": 1024}


def _prompt(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value:
        raise InvalidInputError("must not be empty", field=attribute.name)


def _device(_instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if value != 0:
        raise InvalidInputError(
            "ferrule's local embedders run on the CPU: only device 0 (the default) is taken",
            field=attribute.name,
        )


@attrs.frozen
class AiloyEmbeddingAttributes:
    """``tvm_embedding_model``'s ``define`` attributes, as Ailoy 0.1 has them."""

    #: The model id, resolved through ``$FERRULE_MODEL_ALIASES``.
    model: str = DEFAULT_MODEL
    #: Ailoy's (TVM's) weight format; the one it ships is the one accepted.
    quantization: Literal["q4f16_1"] = "q4f16_1"
    #: Ailoy's accelerator index.
    device: int = attrs.field(default=0, validator=_device)


@attrs.frozen
class PromptInput:
    """``infer``'s input: one text."""

    prompt: str = attrs.field(validator=_prompt)


def check_model(attributes: AiloyEmbeddingAttributes, runs: Collection[str]) -> str:
    """The model ``attributes.model`` stands for, after ``$FERRULE_MODEL_ALIASES``, if it is
    one of ``runs`` (lower-case ids of the models the embedder runs); else
    `InvalidInputError` naming ``model``."""
    resolved = resolve_model_alias(attributes.model)
    if resolved.lower() not in runs:
        shown = "" if resolved == attributes.model else f" ({resolved!r} by alias)"
        raise InvalidInputError(
            f"this tvm_embedding_model runs {', '.join(sorted(runs))}, not "
            f"{attributes.model!r}{shown}; to run Ailoy's code on it, alias the id in "
            f"{MODEL_ALIASES_VARIABLE} (e.g. {attributes.model}=all-MiniLM-L6-v2)",
            field="model",
        )
    return resolved


def aliased_dimension(model_id: str) -> int | None:
    """The width Ailoy's code expects of ``model_id`` (`MODEL_DIMENSIONS`) when
    ``$FERRULE_MODEL_ALIASES`` runs it on another model, which is then asked for vectors
    that wide; None when the id is not aliased or its width is not known (the model's own)."""
    if model_id in MODEL_DIMENSIONS and resolve_model_alias(model_id) != model_id:
        return MODEL_DIMENSIONS[model_id]
    return None


class AiloyEmbedderMethods:
    """Ailoy 0.1's ``infer``, for an embedder class that has the contract's ``embed``."""

    if TYPE_CHECKING:

        def embed(self, inputs: EmbedInput) -> dict[str, Any]: ...

    def infer(self, inputs: PromptInput) -> dict[str, Any]:
        return {"embedding": self.embed(EmbedInput([inputs.prompt]))["vectors"][0]}
