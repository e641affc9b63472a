"""The labelled retrieval sets: ``bench/data/knowledge/`` (a text, questions about it,
labelled by the spans that answer them) and ``bench/data/docs/`` (questions about this
repository's ``docs/``, labelled by the sections that answer them), and whether a chunk
that a search found answers a question.

The first set's answers are labelled by the span of text that answers them, not by chunk or paragraph
number, so the labels hold whatever the chunk size: a found chunk answers a span when it
holds the span, or at least half of it where a chunk boundary cuts the span in two (the
half at the chunk's start or end). Whitespace is compared collapsed, so line wrapping in
the text does not matter.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "knowledge"
TEXT = DATA / "jargon.txt"
QUESTIONS = DATA / "questions.json"


def load() -> tuple[str, list[dict[str, Any]]]:
    """The text and its questions (``id``, ``question``, ``answers``: the answering spans)."""
    questions: list[dict[str, Any]] = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    return TEXT.read_text(encoding="utf-8"), questions


def normalize(text: str) -> str:
    return " ".join(text.split())


def covers(chunks: list[str], span: str) -> bool:
    """Whether any of ``chunks`` holds ``span``, or at least half of it at one of its ends
    (the chunks normalized already)."""
    span = normalize(span)
    half = (len(span) + 1) // 2
    for chunk in chunks:
        if span in chunk:
            return True
        # Cheap checks first: a cut span's first (last) half lies in the chunk's tail (head).
        head, tail = span[:half] in chunk[-len(span) :], span[-half:] in chunk[: len(span)]
        if (head or tail) and any(
            (head and chunk.endswith(span[:k])) or (tail and chunk.startswith(span[-k:]))
            for k in range(len(span) - 1, half - 1, -1)
        ):
            return True
    return False


def answered(chunks: list[str], question: dict[str, Any]) -> float:
    """The share of the question's answer spans that ``chunks`` cover."""
    normalized = [normalize(c) for c in chunks]
    spans = question["answers"]
    return sum(covers(normalized, s) for s in spans) / len(spans)


def recall(found: list[list[str]], questions: list[dict[str, Any]], k: int) -> float:
    """The share of answer spans covered by the first ``k`` chunks found, averaged over
    questions (``found[i]``: the chunk texts found for question ``i``, best first)."""
    total = sum(answered(c[:k], q) for c, q in zip(found, questions, strict=True))
    return total / len(questions)


def mrr(found: list[list[str]], questions: list[dict[str, Any]]) -> float:
    """Mean reciprocal rank of the first chunk that covers any answer span (0 if none)."""
    total = 0.0
    for chunks, question in zip(found, questions, strict=True):
        rank = next((i for i, c in enumerate(chunks) if answered([c], question)), None)
        total += 0.0 if rank is None else 1.0 / (rank + 1)
    return total / len(questions)


# -- the docs set: questions about docs/, labelled by the section that answers ------------

DOCS_QUESTIONS = Path(__file__).parent / "data" / "docs" / "questions.json"
#: A chunk answers a section when it holds this many characters of the section's own
#: lines (or half of a shorter section's).
MIN_CHARS = 150
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def docs_questions() -> list[dict[str, Any]]:
    """The docs questions (``id``, ``question``, ``sections``: ``FILE#HEADING`` labels)."""
    questions: list[dict[str, Any]] = json.loads(DOCS_QUESTIONS.read_text(encoding="utf-8"))[
        "questions"
    ]
    return questions


def docs_sections(text: str) -> dict[str, list[list[str]]]:
    """A Markdown file's sections by heading text: for each heading (outside fenced code),
    the lines that follow it up to the next heading, normalized, blank lines left out,
    the lines that occur more than once in the file left out too (a fence, a table rule,
    a repeated directive says nothing of where a chunk came from). A heading that occurs
    twice has two entries."""
    lines = [normalize(line) for line in text.splitlines()]
    counts = Counter(lines)
    sections: dict[str, list[list[str]]] = {}
    current: list[str] | None = None
    fenced = False
    for raw, line in zip(text.splitlines(), lines, strict=True):
        if _FENCE.match(raw):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(raw)
        if heading:
            current = []
            sections.setdefault(heading.group(1), []).append(current)
        elif current is not None and line and counts[line] == 1:
            current.append(line)
    return sections


def answers(chunk: str, section: list[str]) -> bool:
    """Whether ``chunk`` (text of the section's file) holds enough of ``section``'s lines
    (`docs_sections`) to answer from it: `MIN_CHARS` characters, or half of a shorter
    section. A chunk holding only the heading holds none of them."""
    held = {normalize(line) for line in chunk.splitlines()}
    total = sum(map(len, section))
    matched = sum(len(line) for line in section if line in held)
    return matched > 0 and matched >= min(MIN_CHARS, total / 2)
