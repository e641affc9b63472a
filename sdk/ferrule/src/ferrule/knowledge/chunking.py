"""How a document is cut into chunks: Markdown at its headings, then the ``split_text``
operator for what is still over the chunk size; and the stable ids the chunks get."""

from __future__ import annotations

import re
from typing import Any

from ferrule_kit.vectors import content_hash

from .readers import Source

__all__ = ["chunk_id", "markdown_sections", "split", "utf8_size"]

_HEADING = re.compile(r"^#{1,6}\s")
_FENCE = re.compile(r"^(```|~~~)")
#: The longest chunk id a store takes.
_MAX_ID = 512


async def split(runtime: Any, source: Source, chunk_size: int, chunk_overlap: int) -> list[str]:
    """The document's chunks: `split_text`'s, Markdown first cut at its headings (each
    section starts a chunk, small neighbours merged up to ``chunk_size``)."""
    sections = markdown_sections(source.text) if source.kind == "markdown" else [source.text]
    chunks: list[str] = []
    merged = ""
    for section in sections:
        if merged and utf8_size(merged) + utf8_size(section) <= chunk_size:
            merged += section
            continue
        if merged:
            chunks.append(merged)
        merged = ""
        if utf8_size(section) <= chunk_size:
            merged = section
        else:
            inputs = {"text": section, "chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
            chunks += (await runtime.acall("split_text", inputs))["chunks"]
    if merged:
        chunks.append(merged)
    return [c.strip() for c in chunks if c.strip()]


def chunk_id(document_id: str, index: int) -> str:
    """The id of a document's ``index``-th chunk: stable, so a replaced document's chunks
    keep their ids."""
    ident = f"{document_id}#{index}"
    if len(ident) <= _MAX_ID:
        return ident
    return f"{content_hash(document_id)}#{index}"


def markdown_sections(text: str) -> list[str]:
    """Markdown cut before each heading (``#`` to ``######`` at a line's start, outside
    fenced code), each piece keeping its heading."""
    sections: list[str] = []
    current: list[str] = []
    fenced = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _HEADING.match(line) and current:
            sections.append("".join(current))
            current = []
        current.append(line)
    if current:
        sections.append("".join(current))
    return sections


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
