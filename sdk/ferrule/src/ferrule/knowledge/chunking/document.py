"""Agno's ``agno.knowledge.chunking.document``: `DocumentChunking`, chunks along the
document's own structure: whole paragraphs packed together, a paragraph too long for a
chunk cut between sentences (then words), by the ``split_text`` operator (chunks of at most
``chunk_size``, each starting ``overlap`` back into the one before;
`ferrule.knowledge.chunking.strategy`). A document that fits in a chunk is its own."""

from __future__ import annotations

from ..document.base import Document
from .strategy import ChunkingStrategy, asplit_text, split_text

__all__ = ["DocumentChunking"]

SEPARATORS = ["\n\n", "\n", ". ", "! ", "? ", " ", ""]


class DocumentChunking(ChunkingStrategy):
    """``DocumentChunking(chunk_size=1000, overlap=0)`` (see the module docstring)."""

    chunk_size: int
    overlap: int

    def __init__(self, chunk_size: int = 5000, overlap: int = 0) -> None:
        self.chunk_size = chunk_size
        self.overlap = overlap

    def _whole(self, document: Document) -> bool:
        return len(document.content.encode("utf-8", "surrogatepass")) <= self.chunk_size

    def chunk(self, document: Document) -> list[Document]:
        if self._whole(document):
            return [document]
        pieces = split_text(document.content, self.chunk_size, self.overlap, SEPARATORS)
        return self._chunks(document, [p.strip() for p in pieces if p.strip()])

    async def achunk(self, document: Document) -> list[Document]:
        if self._whole(document):
            return [document]
        pieces = await asplit_text(document.content, self.chunk_size, self.overlap, SEPARATORS)
        return self._chunks(document, [p.strip() for p in pieces if p.strip()])
