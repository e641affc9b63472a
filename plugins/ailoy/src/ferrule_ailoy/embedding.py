"""Ailoy 0.1's embedding model, ``tvm_embedding_model``, over ferrule's local embedder
(``local_embedder``, ferrule-minilm's all-MiniLM-L6-v2) and its contract
(`ferrule_kit.embeddings.embedding`)::

    rt.define("tvm_embedding_model", "em0", {"model": "BAAI/bge-m3"})
    rt.call_method("em0", "infer", {"prompt": "What is BGE-M3?"}) -> {"embedding": [...]}

The ``model`` attribute goes through ``$FERRULE_MODEL_ALIASES`` and must then name the
model the local embedder runs (its ``info``): ``BAAI/bge-m3=all-MiniLM-L6-v2`` runs Ailoy's
code offline; any other id is refused, naming ``model``. An aliased id keeps the width of
its own model (`ferrule_kit.embeddings.embedspec.aliased_dimension`: bge-m3's 1024), which Ailoy's
code sizes its stores for: the local model's values come first, then zeros, which change no
cosine, inner product or distance. ``infer`` is the embedder's ``embed`` of one text.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from ferrule_kernel import ComponentRequests, InvalidInputError
from ferrule_kit.embeddings.embedspec import aliased_dimension
from ferrule_kit.models.lmspec import MODEL_ALIASES_VARIABLE, resolve_model_alias

from .plugin import EMBEDDING_MODEL_TYPE, LOCAL_EMBEDDER

__all__ = ["DEFAULT_MODEL", "EmbeddingModel", "EmbeddingModelAttributes", "PromptInput", "create"]

#: Ailoy 0.1's default (and only) embedding model.
DEFAULT_MODEL = "BAAI/bge-m3"


def _not_empty(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value:
        raise InvalidInputError("must not be empty", field=attribute.name)


def _device(_instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if value != 0:
        raise InvalidInputError(
            "ferrule's local embedders run on the CPU: only device 0 (the default) is taken",
            field=attribute.name,
        )


@attrs.frozen
class EmbeddingModelAttributes:
    """``tvm_embedding_model``'s attributes, as Ailoy 0.1 has them."""

    #: The model id, resolved through ``$FERRULE_MODEL_ALIASES``.
    model: str = attrs.field(default=DEFAULT_MODEL, validator=_not_empty)
    #: Ailoy's (TVM's) weight format; the one it ships is the one accepted.
    quantization: Literal["q4f16_1"] = "q4f16_1"
    #: Ailoy's accelerator index.
    device: int = attrs.field(default=0, validator=_device)


@attrs.frozen
class PromptInput:
    """``infer``'s input: one text."""

    prompt: str = attrs.field(validator=_not_empty)


def _runs(model_id: str, embedder_model: str) -> bool:
    """Whether ``model_id`` names ``embedder_model`` (any case, with or without its owner,
    ``sentence-transformers/``)."""
    wanted, runs = model_id.lower(), embedder_model.lower()
    return wanted in (runs, runs.rpartition("/")[2])


class EmbeddingModel:
    """An Ailoy 0.1 embedding model: requests to the ferrule embedder ``embedder``, its
    vectors ``width`` wide (zeros after the embedder's own values)."""

    def __init__(self, requests: ComponentRequests, embedder: str, width: int) -> None:
        self.requests = requests
        self.embedder = embedder
        self.width = width

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.embedder!r}, width={self.width})"

    async def infer(self, inputs: PromptInput) -> dict[str, Any]:
        embedded = await self.requests.call_method(
            self.embedder, "embed", {"texts": [inputs.prompt]}
        )
        vector: list[float] = embedded["vectors"][0]
        return {"embedding": vector + [0.0] * (self.width - len(vector))}


async def create(
    attributes: EmbeddingModelAttributes, requests: ComponentRequests
) -> EmbeddingModel:
    """Define the local embedder, check that it runs the model asked for (after the
    aliases), and answer at that model's width."""
    resolved = resolve_model_alias(attributes.model)
    embedder = await requests.define(LOCAL_EMBEDDER, "embedder", {})
    info = await requests.call_method(embedder, "info", {})
    if not _runs(resolved, info["model"]):
        shown = "" if resolved == attributes.model else f" ({resolved!r} by alias)"
        raise InvalidInputError(
            f"this {EMBEDDING_MODEL_TYPE} runs {info['model']}, not {attributes.model!r}"
            f"{shown}; to run Ailoy's code on it, alias the id in {MODEL_ALIASES_VARIABLE} "
            f"(e.g. {attributes.model}={info['model'].rpartition('/')[2]})",
            field="$.model",
        )
    width = aliased_dimension(attributes.model) or int(info["dimension"])
    return EmbeddingModel(requests, embedder, max(width, int(info["dimension"])))
