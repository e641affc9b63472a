"""`MiniLMEmbedder`: all-MiniLM-L6-v2 on this machine (ferrule-minilm's ``minilm_embedder``),
the offline default of `Knowledge` and the vector databases. Agno's name for it is
`ferrule.knowledge.embedder.sentence_transformer.SentenceTransformerEmbedder`."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
from ferrule_kernel import InvalidInputError

from .base import BASE_FIELDS, Embedder, fields_first, whole_number

__all__ = ["MINILM_DIMENSION", "MiniLMEmbedder"]

#: all-MiniLM-L6-v2's vector size.
MINILM_DIMENSION = 384


@attrs.frozen(field_transformer=fields_first("batch_size", *BASE_FIELDS))
class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 on this machine (384 dimensions, cosine), weights shipped in
    ferrule-minilm: no network, no key. ``batch_size``: texts per forward pass (None: the
    component's default)."""

    component_type: ClassVar[str] = "minilm_embedder"

    batch_size: int | None = attrs.field(default=None, validator=whole_number(1))  # type: ignore[assignment]
    dimensions: int | None = attrs.field(default=MINILM_DIMENSION, validator=whole_number(1))

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {}
        if self.batch_size is not None:
            attributes["batch_size"] = self.batch_size
        dimension = self.dimensions or MINILM_DIMENSION
        if dimension < MINILM_DIMENSION:
            raise InvalidInputError(
                f"all-MiniLM-L6-v2's vectors have {MINILM_DIMENSION} dimensions; more are "
                f"padded with zeros, fewer cannot be made (got {dimension})",
                field="dimensions",
            )
        if dimension != MINILM_DIMENSION:
            attributes["dimension"] = dimension
        return attributes

    def usage_of(self, usage: dict[str, Any]) -> dict[str, Any] | None:
        return None  # a local model: nothing billed, as Agno's local embedders say
