"""Recursive and single-separator text splitting, measured in UTF-8 bytes.

The chunks are exactly those of LangChain's ``RecursiveCharacterTextSplitter`` (and
``CharacterTextSplitter``) with ``keep_separator=False``, ``strip_whitespace=False`` and a
UTF-8 byte length function, minus the chunks that are only whitespace. The design differs
so that the per-piece work happens in C:

- pieces come from ``str.split`` (a literal separator: LangChain's escaped ``re.split``
  finds the same matches), their byte lengths from one ``map`` over them;
- merging reads a prefix-sum array ``Q`` where ``Q[k]`` is the byte length of pieces
  ``[0, k)`` plus one separator after each: the byte length of pieces ``[s, e)`` joined
  by the separator is ``Q[e] - Q[s] - separator_length``. LangChain's greedy merge (add
  a piece while the chunk stays within ``chunk_size``; on overflow emit the chunk, then
  drop pieces from its front while it is longer than ``chunk_overlap`` or the next piece
  would not fit) becomes two binary searches per chunk instead of a loop per piece.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import accumulate, compress, count, repeat
from operator import add, ge, sub
from typing import TYPE_CHECKING

from ferrule_kernel import InvalidInputError

if TYPE_CHECKING:
    from .plugin import SplitTextBySeparatorInput, SplitTextInput


def split_text_operator(inputs: SplitTextInput) -> dict[str, list[str]]:
    with _text_errors():
        chunks = split_recursively(
            inputs.text, inputs.separators, inputs.chunk_size, inputs.chunk_overlap
        )
    return {"chunks": chunks}


def split_text_by_separator_operator(inputs: SplitTextBySeparatorInput) -> dict[str, list[str]]:
    with _text_errors():
        chunks = split_by_separator(
            inputs.text, inputs.separator, inputs.chunk_size, inputs.chunk_overlap
        )
    return {"chunks": chunks}


@contextmanager
def _text_errors() -> Iterator[None]:
    """Turn a lone surrogate met while measuring the text into an error naming ``$.text``."""
    try:
        yield
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"text is not valid Unicode: {exc.reason} ({exc.object[exc.start : exc.end]!r})",
            field="$.text",
        ) from None


def split_recursively(
    text: str, separators: Sequence[str], chunk_size: int, chunk_overlap: int
) -> list[str]:
    """Chunks of ``text`` (arguments already validated: ``1 <= chunk_size``,
    ``0 <= chunk_overlap <= chunk_size``, at least one separator)."""
    chunker = _Chunker(chunk_size, chunk_overlap)
    chunker.split(text, tuple(separators))
    return _drop_blank(chunker.chunks)


def split_by_separator(text: str, separator: str, chunk_size: int, chunk_overlap: int) -> list[str]:
    """Chunks of ``text`` split on ``separator`` only; a piece longer than ``chunk_size``
    becomes a chunk of its own."""
    chunker = _Chunker(chunk_size, chunk_overlap)
    pieces, offsets = _pieces(text, separator)
    if pieces:
        chunker.merge(pieces, offsets, 0, len(pieces), separator)
    return _drop_blank(chunker.chunks)


class _Chunker:
    """Collects the chunks of one text."""

    def __init__(self, chunk_size: int, chunk_overlap: int) -> None:
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.chunks: list[str] = []

    def split(self, text: str, separators: tuple[str, ...]) -> None:
        # The first separator found in the text, or "" (split by character) when "" comes
        # first; with none found, the last one (which then leaves the text whole).
        separator, finer = separators[-1], ()
        for index, candidate in enumerate(separators):
            if not candidate:
                separator = ""
                break
            if candidate in text:
                separator, finer = candidate, separators[index + 1 :]
                break
        pieces, offsets = _pieces(text, separator)
        if not pieces:
            return
        # Pieces of at least chunk_size bytes are split further (or kept whole when no
        # finer separator is left); the runs of smaller pieces between them are merged.
        # (A character has at most 4 bytes: with larger chunks none is that big.)
        big_pieces: Iterable[int] = ()
        if separator or self.chunk_size <= 4:
            sizes = map(sub, offsets[1:], offsets)  # bytes + separator bytes, per piece
            limit = self.chunk_size + len(separator.encode())
            big_pieces = compress(count(), map(ge, sizes, repeat(limit)))
        start = 0
        for big in big_pieces:
            if start < big:
                self.merge(pieces, offsets, start, big, separator)
            if finer:
                self.split(pieces[big], finer)
            else:
                self.chunks.append(pieces[big])
            start = big + 1
        if start < len(pieces):
            self.merge(pieces, offsets, start, len(pieces), separator)

    def merge(
        self,
        pieces: Sequence[str],
        offsets: Sequence[int],
        first: int,
        end: int,
        separator: str,
    ) -> None:
        """Merge ``pieces[first:end]`` into chunks, as LangChain's ``_merge_splits`` does.

        The current chunk is the window ``pieces[start:stop]``; its byte length is
        ``offsets[stop] - offsets[start] - len(separator)``. Offsets strictly increase
        (every piece has at least one byte), so each step is a binary search.
        """
        separator_length = len(separator.encode())
        chunk_size, chunk_overlap = self.chunk_size, self.chunk_overlap
        chunks = self.chunks
        start = stop = first
        while True:
            # The first piece at or after ``stop`` that would take the chunk past chunk_size.
            limit = offsets[start] + separator_length + chunk_size
            overflow = bisect_right(offsets, limit, stop + 1, end + 1) - 1
            last = overflow == end
            if start < overflow:  # (a single piece larger than chunk_size leaves it empty)
                window = pieces[start:overflow]
                chunks.append(separator.join(window) if separator else window)
            if last:
                return
            # Drop pieces from the front while the chunk is longer than chunk_overlap, or
            # while the overflowing piece would not fit after it.
            keep_from = max(
                offsets[overflow] - separator_length - chunk_overlap,
                offsets[overflow + 1] - separator_length - chunk_size,
            )
            start = bisect_left(offsets, keep_from, start, overflow)
            stop = overflow + 1


def _pieces(text: str, separator: str) -> tuple[Sequence[str], Sequence[int]]:
    """The non-empty pieces of ``text`` between separators, and ``Q``: ``Q[k]`` = bytes
    of ``pieces[0:k]``, each followed by a separator.

    Split by character (``""``), the pieces are the text itself (a chunk is a slice, and
    no list of characters is built); an ASCII text's offsets are then a ``range``.
    """
    if not separator:
        if text.isascii():
            return text, range(len(text) + 1)
        return text, list(accumulate(map(len, map(str.encode, text)), initial=0))
    pieces = list(filter(None, text.split(separator)))
    # (str.isascii() is O(1); a piece of an ASCII text has one byte per character)
    lengths = map(len, pieces) if text.isascii() else map(len, map(str.encode, pieces))
    separator_length = len(separator.encode())
    return pieces, list(accumulate(map(add, lengths, repeat(separator_length)), initial=0))


def _drop_blank(chunks: list[str]) -> list[str]:
    return [chunk for chunk in chunks if not chunk.isspace()]
