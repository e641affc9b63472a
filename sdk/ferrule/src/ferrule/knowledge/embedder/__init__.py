"""Embedders for `Knowledge`: descriptions of an embedder component.

    from ferrule.knowledge.embedder import MiniLMEmbedder, OpenAIEmbedder, GeminiEmbedder
    Knowledge(embedder=OpenAIEmbedder(id="text-embedding-3-small"))

Each describes an embedder of the contract in `ferrule_kit.embedding`
(``minilm_embedder`` from ferrule-minilm, the offline default; ``openai_embedder`` from
ferrule-openai, which also speaks to any OpenAI-compatible embeddings server through
``base_url``; ``gemini_embedder`` from ferrule-gemini). `Knowledge` defines it on its
runtime when first needed. Any `Embedder` works, and so does the name of an embedder
component already defined on the runtime.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

import attrs

__all__ = ["Embedder", "GeminiEmbedder", "MiniLMEmbedder", "OpenAIEmbedder"]


@runtime_checkable
class Embedder(Protocol):
    """An embedder component description: its component type and the attributes to
    define it with on ``runtime``."""

    component_type: str

    def attributes(self, runtime: Any) -> dict[str, Any]: ...


@attrs.frozen
class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on this machine (384 dimensions, cosine), weights shipped in
    ferrule-minilm: no network, no key."""

    component_type: ClassVar[str] = "minilm_embedder"

    #: Texts per forward pass (None: the component's default).
    batch_size: int | None = None

    def attributes(self, runtime: Any) -> dict[str, Any]:
        return {} if self.batch_size is None else {"batch_size": self.batch_size}


@attrs.frozen
class OpenAIEmbedder:
    """OpenAI's embeddings API, or any OpenAI-compatible server through ``base_url``. The
    key comes from here, ``OPENAI_API_KEY`` or ``ferrule keys set openai``."""

    component_type: ClassVar[str] = "openai_embedder"

    id: str = "text-embedding-3-small"
    #: Shorter vectors (text-embedding-3 models).
    dimensions: int | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    base_url: str | None = None
    #: Texts per request (None: the component's default).
    batch_size: int | None = None

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {"model": self.id}
        for key, value in (
            ("dimensions", self.dimensions),
            ("api_key", self.api_key),
            ("base_url", self.base_url),
            ("max_batch", self.batch_size),
        ):
            if value is not None:
                attributes[key] = value
        return attributes


@attrs.frozen
class GeminiEmbedder:
    """Google's Gemini embeddings API (documents and queries embedded with their retrieval
    task types). The key comes from here, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``."""

    component_type: ClassVar[str] = "gemini_embedder"

    id: str = "gemini-embedding-001"
    dimensions: int | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    base_url: str | None = None
    batch_size: int | None = None

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {"model": self.id}
        for key, value in (
            ("dimensions", self.dimensions),
            ("api_key", self.api_key),
            ("base_url", self.base_url),
            ("max_batch", self.batch_size),
        ):
            if value is not None:
                attributes[key] = value
        return attributes
