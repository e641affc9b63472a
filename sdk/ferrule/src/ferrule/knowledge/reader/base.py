"""Agno's ``agno.knowledge.reader.base``: `Reader`, what turns a file (a path, or an open
binary file) into `Document` s, chunked by its chunking strategy when ``chunk`` is on.

Files are hostile input: each is read under `ferrule.knowledge.ReadLimits` (its size; a
PDF's pages, text and time), as `Knowledge` reads them; a missing or unreadable file, or
one over a bound, raises `InvalidInputError` naming it. ``chunking_strategy`` (default:
each reader's, Agno's) cuts each document (`ferrule.knowledge.chunking`); ``chunk_size``
is the default strategy's size. ``name`` and ``description`` describe the reader;
``separators`` and ``max_results`` are kept as Agno keeps them, for strategies and
searching readers (the file readers here read neither, as Agno's do not).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import IO, Any

from ferrule_kernel import InvalidInputError

from ..chunking.strategy import ChunkingStrategyType
from ..document.base import Document
from ..readers import ReadLimits
from ..types import ContentType

__all__ = ["DEFAULT_SEPARATORS", "Reader", "read_source"]

DEFAULT_SEPARATORS = ["\n", "\n\n", "\r", "\r\n", "\n\r", "\t", " ", "  "]


def read_source(
    source: str | os.PathLike[str] | IO[Any], name: str | None, limits: ReadLimits, default: str
) -> tuple[bytes, str]:
    """The bytes of ``source`` (a path, or an open file read from its start) under
    ``limits``, and the document's name: ``name``, else the file's name without its
    extension (``default`` for a file with none)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        if not path.is_file():
            raise InvalidInputError(f"no such file: {path}", field="file")
        size = path.stat().st_size
        if size > limits.max_file_bytes:
            raise InvalidInputError(
                f"{path} is {size} bytes; the limit is {limits.max_file_bytes}",
                field="file",
                reason="file_size",
            )
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InvalidInputError(f"cannot read {path}: {exc.strerror}", field="file") from None
        return data, name or path.stem
    if not hasattr(source, "read"):
        raise InvalidInputError(
            f"expected a path or an open file, got {type(source).__name__}", field="file"
        )
    if hasattr(source, "seek"):
        source.seek(0)
    data = source.read(limits.max_file_bytes + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > limits.max_file_bytes:
        raise InvalidInputError(
            f"the file is over the limit of {limits.max_file_bytes} bytes",
            field="file",
            reason="file_size",
        )
    label = str(getattr(source, "name", "") or default)
    return bytes(data), name or Path(label).stem or default


def decode(data: bytes, encoding: str | None, what: str) -> str:
    """``data`` as text in ``encoding`` (UTF-8 by default), refused by name when it is not."""
    try:
        return data.decode(encoding or "utf-8")
    except (UnicodeDecodeError, LookupError) as exc:
        raise InvalidInputError(
            f"{what} is not {encoding or 'utf-8'} text: {exc}", field="file"
        ) from None


class Reader:
    """The base of the readers (see the module docstring); a subclass says how it
    ``read`` s."""

    chunk: bool
    chunk_size: int
    separators: list[str]
    chunking_strategy: Any
    name: str | None
    description: str | None
    max_results: int
    encoding: str | None
    #: The bounds on reading one file (`ReadLimits`; a keyword of every reader).
    limits: ReadLimits

    def __init__(
        self,
        chunk: bool = True,
        *,
        chunk_size: int = 5000,
        separators: list[str] | None = None,
        chunking_strategy: Any = None,
        name: str | None = None,
        description: str | None = None,
        max_results: int = 5,
        encoding: str | None = None,
        **kwargs: Any,
    ) -> None:
        limits = kwargs.pop("limits", None)
        if kwargs:
            raise InvalidInputError(
                f"{type(self).__name__} takes no {', '.join(sorted(kwargs))}",
                field=sorted(kwargs)[0],
            )
        self.chunk = chunk
        self.chunk_size = chunk_size
        self.separators = list(DEFAULT_SEPARATORS if separators is None else separators)
        self.chunking_strategy = chunking_strategy
        self.name = name
        self.description = description
        self.max_results = max_results
        self.encoding = encoding
        self.limits = limits or ReadLimits()

    def set_chunking_strategy_from_string(
        self,
        strategy_name: str,
        chunk_size: int | None = None,
        overlap: int | None = None,
        **kwargs: Any,
    ) -> None:
        """Chunk with the strategy of Agno's name ``strategy_name`` (``"FixedSizeChunker"``...)."""
        from ..chunking.strategy import ChunkingStrategyFactory

        self.chunking_strategy = ChunkingStrategyFactory.create_strategy(
            ChunkingStrategyType.from_string(strategy_name),
            chunk_size=chunk_size,
            overlap=overlap,
            **kwargs,
        )

    def read(
        self, obj: Any, name: str | None = None, password: str | None = None
    ) -> list[Document]:
        """The documents of ``obj`` (a subclass says how)."""
        raise NotImplementedError(f"{type(self).__name__} does not read")

    async def async_read(
        self, obj: Any, name: str | None = None, password: str | None = None
    ) -> list[Document]:
        """`read`, in a worker thread."""
        return await asyncio.to_thread(self.read, obj, name, password)

    @classmethod
    def get_supported_chunking_strategies(cls) -> list[ChunkingStrategyType]:
        """The chunking strategies that suit this reader."""
        return list(ChunkingStrategyType)

    @classmethod
    def get_supported_content_types(cls) -> list[ContentType]:
        """What this reader reads."""
        return [ContentType.FILE]

    def _strategy(self) -> Any:
        if self.chunking_strategy is None:
            from ..chunking.fixed import FixedSizeChunking

            self.chunking_strategy = FixedSizeChunking(chunk_size=self.chunk_size)
        return self.chunking_strategy

    def chunk_document(self, document: Document) -> list[Document]:
        """``document`` cut by the chunking strategy."""
        chunks: list[Document] = self._strategy().chunk(document)
        return chunks

    async def achunk_document(self, document: Document) -> list[Document]:
        """`chunk_document`, awaited."""
        chunks: list[Document] = await self._strategy().achunk(document)
        return chunks

    async def chunk_documents_async(self, documents: list[Document]) -> list[Document]:
        """Every document chunked, in order."""
        parts = await asyncio.gather(*(self.achunk_document(d) for d in documents))
        return [chunk for part in parts for chunk in part]

    def _finish(self, documents: list[Document]) -> list[Document]:
        if not self.chunk:
            return documents
        return [chunk for document in documents for chunk in self.chunk_document(document)]

    async def _afinish(self, documents: list[Document]) -> list[Document]:
        if not self.chunk:
            return documents
        return await self.chunk_documents_async(documents)
