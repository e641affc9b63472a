"""Agno's ``agno.knowledge.chunking.code``: `CodeChunking`, source code cut along its
structure, so that a chunk holds whole definitions.

The code is cut into top-level units: for Python (``language="python"``, or ``"auto"`` when
the text parses as Python) each top-level statement with its decorators and the comments
just above it, a class longer than a chunk cut again into its members; for any other
language, blocks that start at a line with no indentation after a blank line. Units are
packed in order into chunks of at most ``chunk_size`` characters (``tokenizer="character"``,
the one tokenizer: sizes are characters); a unit longer than that is cut between lines. The
chunks, joined, are the text. With ``include_nodes`` each chunk's ``meta_data["nodes"]``
lists its units (``type``, ``name``, ``start_line``, ``end_line``). ``chunker_params`` sets
any of these by name (an unknown one is refused); ``chunker`` is the function cutting a
text into the chunks' texts.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from ..document.base import Document
from .strategy import ChunkingStrategy

__all__ = ["CodeChunking", "Unit", "code_units"]

_TUNABLE = ("tokenizer", "chunk_size", "language", "include_nodes")


@attrs.frozen
class Unit:
    """A run of whole lines (``start``..``end``, 0-based, end excluded) and what it is."""

    start: int
    end: int
    type: str
    name: str | None = None

    def node(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "start_line": self.start + 1,
            "end_line": self.end,
        }


def _python_units(lines: list[str], body: list[ast.stmt], start: int, end: int) -> list[Unit]:
    units: list[Unit] = []
    at = start
    for index, node in enumerate(body):
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        last = (body[index + 1].lineno - 1) if index + 1 < len(body) else end
        if index + 1 < len(body):
            following = body[index + 1]
            decorators = [d.lineno for d in getattr(following, "decorator_list", [])]
            last = min([following.lineno, *decorators]) - 1
            while last > first + 1 and lines[last - 1].lstrip().startswith("#"):
                last -= 1  # comments just above the next unit are the next unit's
        units.append(Unit(min(at, first), last, type(node).__name__, getattr(node, "name", None)))
        at = last
    if units and at < end:
        units[-1] = attrs.evolve(units[-1], end=end)
    return units


def _generic_units(lines: list[str]) -> list[Unit]:
    starts = [0]
    for i in range(1, len(lines)):
        line = lines[i]
        if line.strip() and not line[0].isspace() and not lines[i - 1].strip():
            starts.append(i)
    ends = [*starts[1:], len(lines)]
    return [Unit(a, b, "block") for a, b in zip(starts, ends, strict=True)]


def code_units(text: str, language: str) -> list[Unit]:
    """The top-level units of ``text`` (see the module docstring)."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return []
    if language in ("python", "auto"):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            if language == "python":
                raise InvalidInputError("the code is not valid Python", field="content") from None
        else:
            return _python_units(lines, tree.body, 0, len(lines)) or [Unit(0, len(lines), "module")]
    return _generic_units(lines)


class CodeChunking(ChunkingStrategy):
    """``CodeChunking(chunk_size=1024, language="python")`` (see the module docstring)."""

    tokenizer: str
    chunk_size: int
    language: str
    include_nodes: bool
    chunker_params: dict[str, Any] | None

    def __init__(
        self,
        tokenizer: str = "character",
        chunk_size: int = 2048,
        language: str = "auto",
        include_nodes: bool = False,
        chunker_params: dict[str, Any] | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.chunk_size = chunk_size
        self.language = language
        self.include_nodes = include_nodes
        self.chunker_params = chunker_params
        for name, value in (chunker_params or {}).items():
            if name not in _TUNABLE:
                raise InvalidInputError(
                    f"CodeChunking has no setting {name!r}; its settings: {', '.join(_TUNABLE)}",
                    field=f"chunker_params.{name}",
                )
            setattr(self, name, value)
        if self.tokenizer != "character":
            raise InvalidInputError(
                f"CodeChunking counts characters: tokenizer='character' (got {self.tokenizer!r})",
                field="tokenizer",
            )
        if self.chunk_size < 1:
            raise InvalidInputError("chunk_size must be at least 1", field="chunk_size")

    def _split_unit(self, lines: list[str], unit: Unit) -> list[Unit]:
        """A unit longer than a chunk: a class's members, else runs of lines that fit."""
        size = sum(len(line) for line in lines[unit.start : unit.end])
        if size <= self.chunk_size:
            return [unit]
        if unit.type == "ClassDef":
            tree = ast.parse("".join(lines))
            cls = next(
                (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == unit.name), None
            )
            if cls is not None and len(cls.body) > 1:
                members = _python_units(lines, cls.body, unit.start, unit.end)
                return [u for m in members for u in self._split_unit(lines, m)]
        pieces, start, length = [], unit.start, 0
        for i in range(unit.start, unit.end):
            if length and length + len(lines[i]) > self.chunk_size:
                pieces.append(attrs.evolve(unit, start=start, end=i))
                start, length = i, 0
            length += len(lines[i])
        pieces.append(attrs.evolve(unit, start=start, end=unit.end))
        return pieces

    def _chunked(self, text: str) -> list[tuple[str, list[Unit]]]:
        lines = text.splitlines(keepends=True)
        units = [
            u for unit in code_units(text, self.language) for u in self._split_unit(lines, unit)
        ]
        chunks: list[tuple[str, list[Unit]]] = []
        current: list[Unit] = []
        length = 0
        for unit in units:
            size = sum(len(line) for line in lines[unit.start : unit.end])
            if current and length + size > self.chunk_size:
                chunks.append(("".join(lines[current[0].start : current[-1].end]), current))
                current, length = [], 0
            current.append(unit)
            length += size
        if current:
            chunks.append(("".join(lines[current[0].start : current[-1].end]), current))
        return chunks

    @property
    def chunker(self) -> Callable[[str], list[str]]:
        """The chunks' texts of a text."""
        return lambda text: [piece for piece, _ in self._chunked(text)]

    def chunk(self, document: Document) -> list[Document]:
        if not document.content:
            return [document]
        chunked = self._chunked(document.content)
        out = self._chunks(document, [piece for piece, _ in chunked])
        if self.include_nodes:
            for made, (_, units) in zip(out, chunked, strict=True):
                made.meta_data["nodes"] = [u.node() for u in units]
        return out
