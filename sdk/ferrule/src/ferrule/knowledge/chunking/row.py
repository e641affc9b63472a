"""Agno's ``agno.knowledge.chunking.row``: `RowChunking`, a chunk per line of a table's text
(a CSV read by `CSVReader`): empty lines left out, ``skip_header`` drops the first,
``clean_rows`` makes each run of blank space one space. Each chunk's ``meta_data`` has its
``row_number`` (the header is row 1)."""

from __future__ import annotations

from ..document.base import Document
from .strategy import ChunkingStrategy

__all__ = ["RowChunking"]


class RowChunking(ChunkingStrategy):
    """``RowChunking(skip_header=True)`` (see the module docstring)."""

    skip_header: bool
    clean_rows: bool

    def __init__(self, skip_header: bool = False, clean_rows: bool = True) -> None:
        self.skip_header = skip_header
        self.clean_rows = clean_rows

    def chunk(self, document: Document) -> list[Document]:
        rows = (document.content or "").splitlines()
        first = 1
        if self.skip_header and rows:
            rows, first = rows[1:], 2
        out = []
        for offset, row in enumerate(rows):
            text = " ".join(row.split()) if self.clean_rows else row.strip()
            if not text:
                continue
            number = first + offset
            out.append(
                Document(
                    content=text,
                    id=self._generate_chunk_id(document, number, text, prefix="row"),
                    name=document.name,
                    meta_data={**(document.meta_data or {}), "row_number": number},
                )
            )
        return out
