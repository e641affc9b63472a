"""Agno's ``agno.knowledge.chunking.strategy``: `ChunkingStrategy`, how an Agno reader cuts a
`Document` into chunk documents, `ChunkingStrategyType` (the strategies by Agno's names) and
`ChunkingStrategyFactory` (a strategy from its name).

Each chunk is a `Document` named as its source, with the source's ``meta_data`` plus
``chunk`` (its number, from 1) and ``chunk_size`` (its length), and an id made from the
source's id (else its name, else a hash of the chunk) and the number. The strategies that
cut by size (`FixedSizeChunking`, `RecursiveChunking`, `DocumentChunking`,
`MarkdownChunking`) cut with the engine's ``split_text`` operator, the splitter
`Knowledge` uses, on the process's shared runtime: sizes are its UTF-8 bytes (Agno's
characters, for ASCII text the same).
"""

from __future__ import annotations

import enum
import hashlib
import re
from abc import ABC, abstractmethod
from typing import Any

from ferrule_kernel import InvalidInputError

from ..document.base import Document

__all__ = [
    "ChunkingStrategy",
    "ChunkingStrategyFactory",
    "ChunkingStrategyType",
    "asplit_text",
    "split_text",
]


def _inputs(text: str, size: int, overlap: int, separators: list[str] | None) -> dict[str, Any]:
    inputs: dict[str, Any] = {
        "text": text,
        "chunk_size": max(1, size),
        "chunk_overlap": max(0, min(overlap, size - 1)),
    }
    if separators is not None:
        inputs["separators"] = separators
    return inputs


def split_text(
    text: str, chunk_size: int, overlap: int = 0, separators: list[str] | None = None
) -> list[str]:
    """``text`` cut by the ``split_text`` operator (pieces of at most ``chunk_size`` UTF-8
    bytes, trying each of ``separators`` in turn)."""
    if not text:
        return []
    from ...shared_runtime import default_runtime

    out = default_runtime().call("split_text", _inputs(text, chunk_size, overlap, separators))
    chunks: list[str] = out["chunks"]
    return chunks


async def asplit_text(
    text: str, chunk_size: int, overlap: int = 0, separators: list[str] | None = None
) -> list[str]:
    """`split_text`, awaited."""
    if not text:
        return []
    from ...shared_runtime import default_runtime

    out = await default_runtime().acall(
        "split_text", _inputs(text, chunk_size, overlap, separators)
    )
    chunks: list[str] = out["chunks"]
    return chunks


class ChunkingStrategy(ABC):
    """How a document is cut into chunks (see the module docstring)."""

    @abstractmethod
    def chunk(self, document: Document) -> list[Document]:
        """The chunks of ``document``."""

    async def achunk(self, document: Document) -> list[Document]:
        """`chunk`, awaited (a strategy that waits on something says how)."""
        return self.chunk(document)

    def clean_text(self, text: str) -> str:
        """``text`` with each run of blank space made one space."""
        return re.sub(r"\s+", " ", text)

    def _generate_chunk_id(
        self,
        document: Document,
        chunk_number: int,
        content: str | None = None,
        prefix: str | None = None,
    ) -> str | None:
        suffix = f"_{prefix}_{chunk_number}" if prefix else f"_{chunk_number}"
        if document.id:
            return f"{document.id}{suffix}"
        if document.name:
            return f"{document.name}{suffix}"
        source = content or document.content
        if not source:
            return None
        digest = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        return f"chunk_{digest}{suffix}"

    def _chunks(self, document: Document, pieces: list[str]) -> list[Document]:
        """Documents of ``pieces`` (see the module docstring)."""
        out = []
        for number, piece in enumerate(pieces, 1):
            meta_data = {**(document.meta_data or {}), "chunk": number, "chunk_size": len(piece)}
            out.append(
                Document(
                    content=piece,
                    id=self._generate_chunk_id(document, number, piece),
                    name=document.name,
                    meta_data=meta_data,
                )
            )
        return out


class ChunkingStrategyType(str, enum.Enum):
    """The strategies by Agno's names."""

    AGENTIC_CHUNKER = "AgenticChunker"
    CODE_CHUNKER = "CodeChunker"
    DOCUMENT_CHUNKER = "DocumentChunker"
    RECURSIVE_CHUNKER = "RecursiveChunker"
    SEMANTIC_CHUNKER = "SemanticChunker"
    FIXED_SIZE_CHUNKER = "FixedSizeChunker"
    ROW_CHUNKER = "RowChunker"
    MARKDOWN_CHUNKER = "MarkdownChunker"

    @classmethod
    def from_string(cls, strategy_name: str) -> ChunkingStrategyType:
        """The member named ``strategy_name`` (``"FixedSizeChunker"``...)."""
        for member in cls:
            if member.value == strategy_name.strip():
                return member
        raise InvalidInputError(
            f"no chunking strategy {strategy_name!r}; the strategies: "
            + ", ".join(m.value for m in cls),
            field="strategy_name",
        )


#: Each strategy's module and class, and which of chunk_size / overlap it takes (and as what).
_STRATEGIES: dict[ChunkingStrategyType, tuple[str, str, str | None, bool]] = {
    ChunkingStrategyType.AGENTIC_CHUNKER: ("agentic", "AgenticChunking", "max_chunk_size", False),
    ChunkingStrategyType.CODE_CHUNKER: ("code", "CodeChunking", "chunk_size", False),
    ChunkingStrategyType.DOCUMENT_CHUNKER: ("document", "DocumentChunking", "chunk_size", True),
    ChunkingStrategyType.RECURSIVE_CHUNKER: ("recursive", "RecursiveChunking", "chunk_size", True),
    ChunkingStrategyType.SEMANTIC_CHUNKER: ("semantic", "SemanticChunking", "chunk_size", False),
    ChunkingStrategyType.FIXED_SIZE_CHUNKER: ("fixed", "FixedSizeChunking", "chunk_size", True),
    ChunkingStrategyType.ROW_CHUNKER: ("row", "RowChunking", None, False),
    ChunkingStrategyType.MARKDOWN_CHUNKER: ("markdown", "MarkdownChunking", "chunk_size", True),
}


class ChunkingStrategyFactory:
    """`create_strategy`: a strategy from its `ChunkingStrategyType`."""

    @classmethod
    def create_strategy(
        cls,
        strategy_type: ChunkingStrategyType,
        chunk_size: int | None = None,
        overlap: int | None = None,
        **kwargs: Any,
    ) -> ChunkingStrategy:
        """A ``strategy_type`` strategy with ``chunk_size`` and ``overlap`` where it takes
        them (a strategy with no overlap is made without it), and ``kwargs``."""
        import importlib

        module, name, size_name, takes_overlap = _STRATEGIES[ChunkingStrategyType(strategy_type)]
        if chunk_size is not None and size_name is not None:
            kwargs[size_name] = chunk_size
        if overlap is not None and takes_overlap:
            kwargs["overlap"] = overlap
        made: ChunkingStrategy = getattr(importlib.import_module(f".{module}", __package__), name)(
            **kwargs
        )
        return made
