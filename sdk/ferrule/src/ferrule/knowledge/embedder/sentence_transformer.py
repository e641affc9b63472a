"""Agno's ``agno.knowledge.embedder.sentence_transformer``: `SentenceTransformerEmbedder`
embeds with all-MiniLM-L6-v2 (Agno's default model for it) on this machine, through
ferrule-minilm's ``minilm_embedder`` (`ferrule.knowledge.embedder.MiniLMEmbedder`, whose
weights ship in the package): no network, no torch.

``id`` names the model: all-MiniLM-L6-v2 is the one served locally, another is refused
(an OpenAI-compatible server embeds it: ``OpenAIEmbedder(base_url=...)``). ``prompt`` is
put before every text, as sentence-transformers does; the vectors are unit length
whatever ``normalize_embeddings`` says, as sentence-transformers gives them for this model
(its pipeline ends in a normalisation). ``dimensions`` is 384, the model's (more are
padded with zeros). With ``enable_batch``, ``batch_size`` texts go through the model
together; without it, the component's own batch (32). ``sentence_transformer_client``,
a loaded sentence-transformers model, is refused: ferrule runs the model itself.
"""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .base import BASE_FIELDS, fields_first, whole_number
from .minilm import MINILM_DIMENSION, MiniLMEmbedder

__all__ = ["MODEL_IDS", "SentenceTransformerEmbedder"]

#: The one model served, by the ids it goes by on the Hugging Face Hub.
MODEL_IDS = ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2")


def _served(_instance: Any, _attribute: attrs.Attribute[Any], value: Any) -> None:
    if value not in MODEL_IDS:
        raise InvalidInputError(
            f"only sentence-transformers/all-MiniLM-L6-v2 is served locally (ferrule-minilm), "
            f"not {value!r}; for other models use OpenAIEmbedder(base_url=...) with a server "
            "that embeds them",
            field="id",
        )


def _no_client(_instance: Any, _attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None:
        raise InvalidInputError(
            "ferrule runs all-MiniLM-L6-v2 itself (ferrule-minilm), with no sentence-"
            "transformers model object: leave sentence_transformer_client out",
            field="sentence_transformer_client",
        )


@attrs.frozen(field_transformer=fields_first(*BASE_FIELDS))
class SentenceTransformerEmbedder(MiniLMEmbedder):
    """all-MiniLM-L6-v2 on this machine, by Agno's name (see the module docstring)."""

    dimensions: int | None = attrs.field(default=MINILM_DIMENSION, validator=whole_number(1))
    batch_size: int | None = attrs.field(default=100, validator=whole_number(1))
    id: str = attrs.field(default=MODEL_IDS[0], validator=_served)
    sentence_transformer_client: Any = attrs.field(default=None, validator=_no_client)
    prompt: str | None = None
    normalize_embeddings: bool = attrs.field(
        default=False, validator=attrs.validators.instance_of(bool)
    )

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes = super().attributes(runtime)
        if not self.enable_batch:
            attributes.pop("batch_size", None)
        if self.prompt:
            attributes["prompt"] = self.prompt
        return attributes
