"""Agno's ``agno.knowledge.chunking.recursive``: `RecursiveChunking`, chunks cut at the
largest boundary that fits: paragraphs, then lines, then words, then anywhere, by the
``split_text`` operator (chunks of at most ``chunk_size``, each starting ``overlap`` back
into the one before; `ferrule.knowledge.chunking.strategy`)."""

from __future__ import annotations

from ferrule_kernel import InvalidInputError

from ..document.base import Document
from .strategy import ChunkingStrategy, asplit_text, split_text

__all__ = ["RecursiveChunking"]

SEPARATORS = ["\n\n", "\n", "\r", "\t", " ", ""]


class RecursiveChunking(ChunkingStrategy):
    """``RecursiveChunking(chunk_size=1000, overlap=100)`` (see the module docstring)."""

    chunk_size: int
    overlap: int

    def __init__(self, chunk_size: int = 5000, overlap: int = 0) -> None:
        if chunk_size < 1:
            raise InvalidInputError("chunk_size must be at least 1", field="chunk_size")
        if not 0 <= overlap < chunk_size:
            raise InvalidInputError(
                f"overlap ({overlap}) must be at least 0 and less than chunk_size ({chunk_size})",
                field="overlap",
            )
        self.chunk_size = chunk_size
        self.overlap = overlap

    def chunk(self, document: Document) -> list[Document]:
        pieces = split_text(document.content, self.chunk_size, self.overlap, SEPARATORS)
        return self._chunks(document, [p.strip() for p in pieces if p.strip()])

    async def achunk(self, document: Document) -> list[Document]:
        pieces = await asplit_text(document.content, self.chunk_size, self.overlap, SEPARATORS)
        return self._chunks(document, [p.strip() for p in pieces if p.strip()])
