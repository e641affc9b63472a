"""Agno's local embedder by its name: ``SentenceTransformerEmbedder()`` embeds with
all-MiniLM-L6-v2 (Agno's default model for it) through `ferrule.knowledge.embedder.MiniLMEmbedder`,
whose weights ship in ferrule-minilm: no network, no torch. Other sentence-transformers
models are not offered (``id`` naming one is refused)."""

from __future__ import annotations

from ferrule_kernel import InvalidInputError

from . import MiniLMEmbedder

__all__ = ["SentenceTransformerEmbedder"]

#: The one model served, by the ids it goes by on the Hugging Face Hub.
MODEL_IDS = ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2")


def SentenceTransformerEmbedder(
    id: str = MODEL_IDS[0], *, batch_size: int | None = None
) -> MiniLMEmbedder:
    """A `MiniLMEmbedder` (``batch_size``: texts per forward pass)."""
    if id not in MODEL_IDS:
        raise InvalidInputError(
            f"only sentence-transformers/all-MiniLM-L6-v2 is served locally (ferrule-minilm), "
            f"not {id!r}; for other models use OpenAIEmbedder(base_url=...) with a server "
            "that embeds them",
            field="id",
        )
    return MiniLMEmbedder(batch_size=batch_size)
