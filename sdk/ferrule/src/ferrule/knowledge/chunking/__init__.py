"""How a document is cut into chunks, and the stable ids the chunks get.

Text goes to the ``split_text`` operator. Markdown is cut at its headings first, and a
heading is never a chunk alone: it names the text after it, so it stays with that text.

- A section is a heading and the text up to the next heading (outside fenced code).
- A heading with no text of its own (``## Part`` straight before ``### Chapter``) joins
  the section after it; headings that end the document join the section before.
- A section that fits in ``chunk_size`` is one chunk (as llama-index's Markdown parser
  makes a node of each; packing small neighbours together, as this module did before,
  found fewer answers first on the labelled questions of ``bench/data/docs/``). A longer
  one is cut by ``split_text`` with its heading repeated at the top of every piece, so
  that each chunk of it says what it is about. Headings longer than half the chunk size
  (bare ones joined to the section's own) head its first piece only, and the later
  pieces carry the section's own heading line when that is short enough: repeated, they
  would leave the pieces mostly heading, and alone they would be a chunk of headings.

Every byte of the text is in some chunk (blank space at a chunk's ends aside), and no
chunk is over ``chunk_size`` UTF-8 bytes. The one chunk that may hold only headings is
a document's last, when headings that no text follows end the document and its last
section is cut.

The package's modules are Agno's chunking strategies (``agno.knowledge.chunking``), for
Agno's readers (`ferrule.knowledge.reader`): `strategy` (`ChunkingStrategy`, the factory),
`fixed`, `recursive`, `document`, `markdown`, `row`, `semantic`, `code`, `agentic`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from ferrule_kit.embeddings.vectors import content_hash

from ..readers import Source

__all__ = [
    "MARKDOWN_CUT",
    "chunk_id",
    "heading_only",
    "markdown_chunks",
    "markdown_sections",
    "split",
    "utf8_size",
]

_HEADING = re.compile(r"^#{1,6}\s")
_FENCE = re.compile(r"^(```|~~~)")
#: The longest chunk id a store takes.
_MAX_ID = 512
#: Part of a Markdown document's version (`ferrule.knowledge.ingest.version`): a change
#: of how Markdown is cut re-embeds what the older cut stored.
MARKDOWN_CUT = "sections-3"

#: ``cut(text, size, overlap)``: ``text``'s chunks of at most ``size`` bytes (`split_text`).
Cut = Callable[[str, int, int], Awaitable[list[str]]]


async def split(runtime: Any, source: Source, chunk_size: int, chunk_overlap: int) -> list[str]:
    """The document's chunks: `split_text`'s, Markdown cut at its headings first
    (`markdown_chunks`)."""

    async def cut(text: str, size: int, overlap: int) -> list[str]:
        inputs = {"text": text, "chunk_size": size, "chunk_overlap": min(overlap, size)}
        chunks: list[str] = (await runtime.acall("split_text", inputs))["chunks"]
        return chunks

    if source.kind == "markdown":
        return await markdown_chunks(source.text, chunk_size, chunk_overlap, cut)
    return _tidy(await cut(source.text, chunk_size, chunk_overlap))


async def markdown_chunks(text: str, chunk_size: int, chunk_overlap: int, cut: Cut) -> list[str]:
    """Markdown ``text`` in chunks of at most ``chunk_size`` bytes, headings kept with
    their text (see the module docstring); ``cut`` splits what is too long."""
    chunks: list[str] = []
    for heading, body in _sections_with_text(markdown_sections(text)):
        whole = heading + body
        title = heading.strip()
        room = chunk_size - utf8_size(title) - 2  # the title, a blank line, the piece
        if utf8_size(whole) <= chunk_size:
            chunks.append(whole)
        elif not title or room < 1:
            chunks += await cut(whole, chunk_size, chunk_overlap)
        else:
            # Every piece carries the headings; where they are too long to repeat (bare
            # headings joined to the section's own), the first piece carries them all and
            # the others the section's own heading, if that is short enough.
            pieces = [p.strip() for p in await cut(body, room, chunk_overlap)]
            repeated = title if utf8_size(title) <= chunk_size // 2 else title.splitlines()[-1]
            again = f"{repeated}\n\n" if utf8_size(repeated) <= chunk_size // 2 else ""
            chunks += [f"{title}\n\n{pieces[0]}", *(again + piece for piece in pieces[1:])]
    return _tidy(chunks)


def _sections_with_text(sections: list[str]) -> list[tuple[str, str]]:
    """(headings, body) per section that has text: a bare heading's lines go into the
    headings of the section after it (or, at the end, the body of the one before)."""
    joined: list[tuple[str, str]] = []
    waiting = ""  # headings with no text yet
    for section in sections:
        heading, body = _heading_and_body(section)
        if not body.strip() and heading:
            waiting += section
            continue
        joined.append((waiting + heading, body))
        waiting = ""
    if waiting:
        if joined:
            heading, body = joined[-1]
            joined[-1] = (heading, body + waiting)
        else:  # nothing but headings
            joined.append(("", waiting))
    return joined


def _heading_and_body(section: str) -> tuple[str, str]:
    """A section's heading line (with its line break; "" for text before the first
    heading) and the rest."""
    if not _HEADING.match(section):
        return "", section
    end = section.find("\n") + 1 or len(section)
    return section[:end], section[end:]


def heading_only(chunk: str) -> bool:
    """Whether ``chunk`` has no line but headings and blank lines (a fence is code)."""
    return all(
        not line.strip() or (_HEADING.match(line) and not _FENCE.match(line))
        for line in chunk.splitlines()
    )


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


def _tidy(chunks: list[str]) -> list[str]:
    return [c.strip() for c in chunks if c.strip()]


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
