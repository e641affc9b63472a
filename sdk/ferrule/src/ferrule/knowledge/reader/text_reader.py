"""Agno's ``agno.knowledge.reader.text_reader``: `TextReader`, a text file as one document
(named as the file, without its extension), cut by `FixedSizeChunking` by default."""

from __future__ import annotations

import uuid
from typing import Any

from ..document.base import Document
from .base import Reader, decode, read_source

__all__ = ["TextReader"]


class TextReader(Reader):
    """``TextReader(chunk_size=1000).read(Path("notes.txt"))`` (see `Reader`)."""

    def __init__(self, chunking_strategy: Any = None, **kwargs: Any) -> None:
        if chunking_strategy is None:
            from ..chunking.fixed import FixedSizeChunking

            chunking_strategy = FixedSizeChunking(chunk_size=kwargs.get("chunk_size", 5000))
        super().__init__(chunking_strategy=chunking_strategy, **kwargs)

    @classmethod
    def get_supported_content_types(cls) -> list[Any]:
        from ..types import ContentType

        return [ContentType.TXT]

    def _documents(self, file: Any, name: str | None) -> list[Document]:
        data, label = read_source(file, name, self.limits, "text_file")
        text = decode(data, self.encoding, label)
        return [Document(content=text, id=str(uuid.uuid4()), name=label)]

    def read(self, file: Any, name: str | None = None) -> list[Document]:  # type: ignore[override]
        """The file's documents (its chunks, when ``chunk``)."""
        return self._finish(self._documents(file, name))

    async def async_read(self, file: Any, name: str | None = None) -> list[Document]:  # type: ignore[override]
        """`read`, awaited."""
        import asyncio

        return await self._afinish(await asyncio.to_thread(self._documents, file, name))
