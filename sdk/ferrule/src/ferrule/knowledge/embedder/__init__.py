"""Embedders for `Knowledge`: descriptions of an embedder component (`base.Embedder`).

    from ferrule.knowledge.embedder import MiniLMEmbedder, OpenAIEmbedder, GeminiEmbedder
    Knowledge(embedder=OpenAIEmbedder(id="text-embedding-3-small"))

Each describes an embedder of the contract in `ferrule_kit.embeddings.embedding`
(``minilm_embedder`` from ferrule-minilm, the offline default, also under Agno's name
`sentence_transformer.SentenceTransformerEmbedder`; ``openai_embedder`` from
ferrule-openai, which also speaks to any OpenAI-compatible embeddings server through
``base_url``; ``gemini_embedder`` from ferrule-gemini). `Knowledge` defines it on its
runtime when first needed; the embedder's own ``get_embedding`` embeds a text on the
process's shared runtime. The name of an embedder component already defined on the
runtime works too. Agno's modules: `base`, `openai`, `google`, `sentence_transformer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kit.content.parts import lazy_attributes

if TYPE_CHECKING:
    from .base import Embedder
    from .google import GeminiEmbedder
    from .minilm import MiniLMEmbedder
    from .openai import OpenAIEmbedder
    from .sentence_transformer import SentenceTransformerEmbedder

__all__ = [
    "Embedder",
    "GeminiEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
]

__getattr__ = lazy_attributes(
    __name__,
    {
        "Embedder": ".base",
        "GeminiEmbedder": ".google",
        "MiniLMEmbedder": ".minilm",
        "OpenAIEmbedder": ".openai",
        "SentenceTransformerEmbedder": ".sentence_transformer",
    },
)
