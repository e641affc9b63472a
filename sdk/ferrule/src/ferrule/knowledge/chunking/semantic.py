"""Agno's ``agno.knowledge.chunking.semantic``: `SemanticChunking`, chunks that end where the
text's meaning turns.

1. The text is cut into sentences after each of ``delimiters`` (kept with the sentence
   before, ``include_delimiters="prev"``; with the one after, ``"next"``; dropped, None);
   a sentence shorter than ``min_characters_per_sentence`` joins the next.
2. Each sentence is embedded (``embedder``: an embedder description, the offline
   `MiniLMEmbedder` by default; `ferrule.knowledge.embeddings`). Between two sentences the
   similarity is that of the last ``similarity_window`` sentences (their mean embedding) to
   the next one.
3. With at least ``filter_window`` of them, the similarities are smoothed by a
   Savitzky-Golay filter (a polynomial of degree ``filter_polyorder`` fitted over
   ``filter_window`` points). A chunk ends at a local minimum of the (smoothed) similarity
   below ``similarity_threshold``, a point counting as a minimum when the similarity falls
   to it and rises after it, or its slope is within ``filter_tolerance`` of flat there.
4. A chunk has at least ``min_sentences_per_chunk`` sentences and at most ``chunk_size``
   characters (a longer one is cut between sentences); with ``skip_window`` above 0, two
   chunks at most ``skip_window`` apart whose meaning is alike (their mean embeddings'
   similarity at least the threshold) become one, with what lies between, when it fits.

``chunker_params`` sets any of these by name (an unknown one is refused). ``chunker`` is
the function cutting a text into the chunks' texts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ferrule_kernel import InvalidInputError

from ..document.base import Document
from .strategy import ChunkingStrategy

__all__ = ["DEFAULT_DELIMITERS", "SemanticChunking", "savgol"]

DEFAULT_DELIMITERS = [". ", "! ", "? ", "\n"]
_TUNABLE = (
    "chunk_size",
    "similarity_threshold",
    "similarity_window",
    "min_sentences_per_chunk",
    "min_characters_per_sentence",
    "delimiters",
    "include_delimiters",
    "skip_window",
    "filter_window",
    "filter_polyorder",
    "filter_tolerance",
)


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """``matrix`` x = ``vector`` by Gaussian elimination (a small, well-posed system)."""
    n = len(vector)
    rows = [[*row[:], value] for row, value in zip(matrix, vector, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col and rows[col][col]:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    return [rows[i][n] / rows[i][i] if rows[i][i] else 0.0 for i in range(n)]


def savgol(values: list[float], window: int, order: int) -> list[float]:
    """``values`` smoothed by a Savitzky-Golay filter: each point the value at it of the
    degree-``order`` polynomial least-squares fitted over the ``window`` points around it
    (at the ends, the window kept inside the series)."""
    n = len(values)
    window = min(window if window % 2 else window + 1, n if n % 2 else n - 1)
    order = min(order, window - 1)
    if window < 3 or order < 0:
        return list(values)
    half = window // 2
    out = []
    for i in range(n):
        start = min(max(0, i - half), n - window)
        xs = [float(x - i) for x in range(start, start + window)]
        ys = values[start : start + window]
        normal = [
            [sum(x ** (a + b) for x in xs) for b in range(order + 1)] for a in range(order + 1)
        ]
        right = [sum((x**a) * y for x, y in zip(xs, ys, strict=True)) for a in range(order + 1)]
        out.append(_solve(normal, right)[0])  # the polynomial at x = 0: the point itself
    return out


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _mean(vectors: list[list[float]]) -> list[float]:
    return [sum(column) / len(vectors) for column in zip(*vectors, strict=True)]


class SemanticChunking(ChunkingStrategy):
    """``SemanticChunking(similarity_threshold=0.5, chunk_size=1000)`` (see the module
    docstring)."""

    embedder: Any
    chunk_size: int
    similarity_threshold: float
    similarity_window: int
    min_sentences_per_chunk: int
    min_characters_per_sentence: int
    delimiters: list[str]
    include_delimiters: str | None
    skip_window: int
    filter_window: int
    filter_polyorder: int
    filter_tolerance: float
    chunker_params: dict[str, Any] | None

    def __init__(
        self,
        embedder: Any = None,
        *,
        chunk_size: int = 5000,
        similarity_threshold: float = 0.5,
        similarity_window: int = 3,
        min_sentences_per_chunk: int = 1,
        min_characters_per_sentence: int = 24,
        delimiters: list[str] | None = None,
        include_delimiters: str | None = "prev",
        skip_window: int = 0,
        filter_window: int = 5,
        filter_polyorder: int = 3,
        filter_tolerance: float = 0.2,
        chunker_params: dict[str, Any] | None = None,
    ) -> None:
        from ..embedder import MiniLMEmbedder

        self.embedder = embedder if embedder is not None else MiniLMEmbedder()
        self.chunk_size = chunk_size
        self.similarity_threshold = similarity_threshold
        self.similarity_window = similarity_window
        self.min_sentences_per_chunk = min_sentences_per_chunk
        self.min_characters_per_sentence = min_characters_per_sentence
        self.delimiters = list(DEFAULT_DELIMITERS if delimiters is None else delimiters)
        self.include_delimiters = include_delimiters
        self.skip_window = skip_window
        self.filter_window = filter_window
        self.filter_polyorder = filter_polyorder
        self.filter_tolerance = filter_tolerance
        self.chunker_params = chunker_params
        for name, value in (chunker_params or {}).items():
            if name not in _TUNABLE:
                raise InvalidInputError(
                    f"SemanticChunking has no setting {name!r}; its settings: {', '.join(_TUNABLE)}",
                    field=f"chunker_params.{name}",
                )
            setattr(self, name, value)
        if self.include_delimiters not in ("prev", "next", None):
            raise InvalidInputError(
                "include_delimiters is 'prev', 'next' or None", field="include_delimiters"
            )
        if self.chunk_size < 1 or self.similarity_window < 1 or self.min_sentences_per_chunk < 1:
            raise InvalidInputError(
                "chunk_size, similarity_window and min_sentences_per_chunk are at least 1",
                field="chunk_size",
            )

    # -- the steps ---------------------------------------------------------------------

    def sentences(self, text: str) -> list[str]:
        """Step 1 of the module docstring."""
        pieces, start, i = [], 0, 0
        while i < len(text):
            found = next((d for d in self.delimiters if d and text.startswith(d, i)), None)
            if found is None:
                i += 1
                continue
            end = i + len(found)
            if self.include_delimiters == "prev":
                pieces.append(text[start:end])
                start = end
            elif self.include_delimiters == "next":
                pieces.append(text[start:i])
                start = i
            else:
                pieces.append(text[start:i])
                start = end
            i = end
        pieces.append(text[start:])
        merged: list[str] = []
        carry = ""
        for piece in pieces:
            carry += piece
            if len(carry.strip()) >= self.min_characters_per_sentence:
                merged.append(carry)
                carry = ""
        if carry.strip():
            if merged:
                merged[-1] += carry
            else:
                merged.append(carry)
        return [s for s in merged if s.strip()]

    def boundaries(self, vectors: list[list[float]]) -> list[int]:
        """Steps 2 and 3: the sentence indexes a new chunk starts at."""
        similarities = [
            _cosine(_mean(vectors[max(0, i - self.similarity_window + 1) : i + 1]), vectors[i + 1])
            for i in range(len(vectors) - 1)
        ]
        if len(similarities) >= self.filter_window:
            similarities = savgol(similarities, self.filter_window, self.filter_polyorder)
        cuts = []
        for i, value in enumerate(similarities):
            if value >= self.similarity_threshold:
                continue
            before = similarities[i - 1] if i > 0 else math.inf
            after = similarities[i + 1] if i + 1 < len(similarities) else math.inf
            slope = (after if after != math.inf else value) - (
                before if before != math.inf else value
            )
            if (value <= before and value <= after) or abs(slope) / 2 <= self.filter_tolerance:
                cuts.append(i + 1)
        return cuts

    def _groups(self, sentences: list[str], vectors: list[list[float]]) -> list[list[int]]:
        """Step 4: the sentences of each chunk, by index."""
        starts = [0, *self.boundaries(vectors)]
        groups = [
            list(range(a, b)) for a, b in zip(starts, [*starts[1:], len(sentences)], strict=True)
        ]
        sized: list[list[int]] = []
        for group in groups:  # at least min_sentences_per_chunk each
            if sized and len(group) < self.min_sentences_per_chunk:
                sized[-1] += group
            else:
                sized.append(group)
        if len(sized) > 1 and len(sized[-1]) < self.min_sentences_per_chunk:
            sized[-2] += sized.pop()

        def length(group: list[int]) -> int:
            return sum(len(sentences[i]) for i in group)

        if self.skip_window > 0:
            i = 0
            while i < len(sized):
                for j in range(min(len(sized) - 1, i + self.skip_window + 1), i, -1):
                    span = [k for g in sized[i : j + 1] for k in g]
                    alike = _cosine(
                        _mean([vectors[k] for k in sized[i]]), _mean([vectors[k] for k in sized[j]])
                    )
                    if alike >= self.similarity_threshold and length(span) <= self.chunk_size:
                        sized[i : j + 1] = [span]
                        break
                i += 1
        out: list[list[int]] = []
        for group in sized:  # at most chunk_size characters, cut between sentences
            current: list[int] = []
            for k in group:
                if current and length(current) + len(sentences[k]) > self.chunk_size:
                    out.append(current)
                    current = []
                current.append(k)
            if current:
                out.append(current)
        return out

    def _pieces(self, sentences: list[str], vectors: list[list[float]]) -> list[str]:
        pieces = [
            "".join(sentences[k] for k in group).strip()
            for group in self._groups(sentences, vectors)
        ]
        return [p for p in pieces if p]

    @property
    def chunker(self) -> Callable[[str], list[str]]:
        """The chunks' texts of a text."""
        return self._texts

    def _texts(self, text: str) -> list[str]:
        from ..embeddings import embed

        sentences = self.sentences(text)
        if len(sentences) < 2:
            return [text.strip()] if text.strip() else []
        vectors, _ = embed(self.embedder, [s.strip() for s in sentences])
        return self._pieces(sentences, vectors)

    def chunk(self, document: Document) -> list[Document]:
        return self._chunks(document, self._texts(document.content or ""))

    async def achunk(self, document: Document) -> list[Document]:
        from ..embeddings import aembed

        text = document.content or ""
        sentences = self.sentences(text)
        if len(sentences) < 2:
            return self._chunks(document, [text.strip()] if text.strip() else [])
        vectors, _ = await aembed(self.embedder, [s.strip() for s in sentences])
        return self._chunks(document, self._pieces(sentences, vectors))
