"""`Document`: one chunk of a knowledge base, with Agno's fields (``content``, ``id``,
``name``, ``meta_data``, ``embedder``, ``embedding``, ``usage``, ``reranking_score``,
``content_id``, ``content_origin``, ``size``) and the search's ``score``.

It is what `Knowledge.search` finds and what Agno's readers and chunkers make
(`ferrule.knowledge.reader`, `ferrule.knowledge.chunking`). `embed` fills ``embedding``
and ``usage`` with an embedder description (`ferrule.knowledge.embedder`), run as
`Knowledge` runs it (`ferrule.knowledge.embeddings`).
"""

from __future__ import annotations

import json
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

__all__ = ["Document"]


@attrs.define
class Document:
    """One chunk (see the module docstring); ``to_dict`` is what a model is shown."""

    content: str
    id: str | None = None
    name: str | None = None
    meta_data: dict[str, Any] = attrs.Factory(dict)
    embedder: Any = attrs.field(default=None, repr=False)
    embedding: list[float] | None = attrs.field(default=None, repr=False)
    usage: dict[str, Any] | None = None
    reranking_score: float | None = None
    content_id: str | None = None
    content_origin: str | None = None
    size: int | None = None
    #: How near the search found it (higher is nearer); None for a chunk not searched.
    score: float | None = attrs.field(default=None, kw_only=True)

    def _embedder(self, embedder: Any) -> Any:
        chosen = embedder or self.embedder
        if chosen is None:
            raise InvalidInputError(
                "no embedder: give one (document.embed(MiniLMEmbedder())) or set document.embedder",
                field="embedder",
            )
        return chosen

    def embed(self, embedder: Any = None) -> None:
        """Set ``embedding`` and ``usage`` with ``embedder`` (else the document's own)."""
        from ..embeddings import embed

        (vector,), self.usage = embed(self._embedder(embedder), [self.content])
        self.embedding = list(vector)

    async def async_embed(self, embedder: Any = None) -> None:
        """`embed`, awaited."""
        from ..embeddings import aembed

        (vector,), self.usage = await aembed(self._embedder(embedder), [self.content])
        self.embedding = list(vector)

    def to_dict(self) -> dict[str, Any]:
        """Agno's shape: ``name`` and ``meta_data`` when set, and ``content``."""
        out: dict[str, Any] = {}
        if self.name is not None:
            out["name"] = self.name
        if self.meta_data is not None:
            out["meta_data"] = self.meta_data
        out["content"] = self.content
        return out

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> Document:
        """A document from its fields by name (an unknown one is refused by name)."""
        known = {f.name for f in attrs.fields(cls)}
        unknown = sorted(set(document) - known)
        if unknown:
            raise InvalidInputError(
                f"Document has no field {', '.join(unknown)}; its fields: {', '.join(sorted(known))}",
                field=unknown[0],
            )
        return cls(**document)

    @classmethod
    def from_json(cls, document: str) -> Document:
        """A document from a JSON object of its fields."""
        return cls.from_dict(json.loads(document))

    @property
    def text(self) -> str:
        """Ailoy 0.2's name of `content`."""
        return self.content

    @property
    def title(self) -> str | None:
        """Ailoy 0.2's name of `name`."""
        return self.name

    def to_ailoy(self) -> dict[str, Any]:
        """Ailoy 0.2's shape of a document: ``id``, ``text`` and ``title`` when it has one."""
        out: dict[str, Any] = {"id": self.id, "text": self.content}
        if self.name is not None:
            out["title"] = self.name
        return out
