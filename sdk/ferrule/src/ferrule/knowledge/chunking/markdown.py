"""Agno's ``agno.knowledge.chunking.markdown``: `MarkdownChunking`, Markdown cut at its
headings (the sections `Knowledge` makes: ``ferrule.knowledge.chunking.markdown_sections``,
headings inside fenced code not counted).

``split_on_headings``: False (the default) packs whole sections together into chunks of at
most ``chunk_size``; True makes each section its own chunk; a level ``n`` (1 to 6) cuts only
at headings of level ``n`` or above, deeper sections staying in theirs. A section longer
than ``chunk_size`` is cut by the ``split_text`` operator, its heading repeated at the top
of each piece so that each says what it is about (`ferrule.knowledge.chunking.strategy`).
"""

from __future__ import annotations

import re

from ferrule_kernel import InvalidInputError

from ..document.base import Document
from .strategy import ChunkingStrategy, asplit_text

__all__ = ["MarkdownChunking"]

_HEADING = re.compile(r"^(#{1,6})\s")
SEPARATORS = ["\n\n", "\n", ". ", " ", ""]


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _level(section: str) -> int | None:
    found = _HEADING.match(section)
    return len(found.group(1)) if found else None


class MarkdownChunking(ChunkingStrategy):
    """``MarkdownChunking(chunk_size=1000, split_on_headings=2)`` (see the module docstring)."""

    chunk_size: int
    overlap: int
    split_on_headings: bool | int

    def __init__(
        self, chunk_size: int = 5000, overlap: int = 0, split_on_headings: bool | int = False
    ) -> None:
        if not isinstance(split_on_headings, bool) and not 1 <= split_on_headings <= 6:
            raise InvalidInputError(
                "split_on_headings is True, False or a heading level from 1 to 6",
                field="split_on_headings",
            )
        self.chunk_size = chunk_size
        self.overlap = overlap
        self.split_on_headings = split_on_headings

    def _sections(self, text: str) -> list[str]:
        from . import markdown_sections  # Knowledge's own cut

        sections = markdown_sections(text)
        level = self.split_on_headings
        if isinstance(level, bool):
            return sections
        merged: list[str] = []
        for section in sections:
            deeper = (_level(section) or 0) > level
            if merged and deeper:
                merged[-1] += section
            else:
                merged.append(section)
        return merged

    async def _cut(self, section: str) -> list[str]:
        if _size(section) <= self.chunk_size:
            return [section.strip()]
        first, _, body = section.partition("\n")
        title = first.strip() if _level(section) else ""
        room = self.chunk_size - _size(title) - 2
        if not title or room < self.chunk_size // 2:
            pieces = await asplit_text(section, self.chunk_size, self.overlap, SEPARATORS)
            return [p.strip() for p in pieces if p.strip()]
        pieces = await asplit_text(body, room, self.overlap, SEPARATORS)
        return [f"{title}\n\n{p.strip()}" for p in pieces if p.strip()]

    async def _pieces(self, text: str) -> list[str]:
        units: list[str] = []
        for section in self._sections(text):
            units += [u for u in await self._cut(section) if u]
        if self.split_on_headings is not False:
            return units
        packed: list[str] = []
        for unit in units:
            if packed and _size(packed[-1]) + 2 + _size(unit) <= self.chunk_size:
                packed[-1] += "\n\n" + unit
            else:
                packed.append(unit)
        return packed

    def chunk(self, document: Document) -> list[Document]:
        from ...shared_runtime import default_runtime

        chunks: list[Document] = default_runtime().sync_bridge.run(self.achunk(document))
        return chunks

    async def achunk(self, document: Document) -> list[Document]:
        return self._chunks(document, await self._pieces(document.content or ""))
