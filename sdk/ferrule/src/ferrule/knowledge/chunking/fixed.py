"""Agno's ``agno.knowledge.chunking.fixed``: `FixedSizeChunking`, chunks of a size, cut
between words: the text's blank space made single spaces, then packed word by word by the
``split_text`` operator into chunks of at most ``chunk_size``, each starting ``overlap``
back into the one before (`ferrule.knowledge.chunking.strategy`)."""

from __future__ import annotations

from ferrule_kernel import InvalidInputError

from ..document.base import Document
from .strategy import ChunkingStrategy, asplit_text, split_text

__all__ = ["FixedSizeChunking"]

#: Words first; a word longer than a chunk is cut anywhere.
SEPARATORS = [" ", ""]


class FixedSizeChunking(ChunkingStrategy):
    """``FixedSizeChunking(chunk_size=1000, overlap=100)`` (see the module docstring)."""

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
        text = self.clean_text(document.content).strip()
        return self._chunks(document, split_text(text, self.chunk_size, self.overlap, SEPARATORS))

    async def achunk(self, document: Document) -> list[Document]:
        text = self.clean_text(document.content).strip()
        pieces = await asplit_text(text, self.chunk_size, self.overlap, SEPARATORS)
        return self._chunks(document, pieces)
