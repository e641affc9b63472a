"""Agno's ``agno.knowledge.reader.markdown_reader``: `MarkdownReader`, a Markdown file as one
document, cut at its headings by `MarkdownChunking` by default (ferrule's own Markdown
chunker is always there: ``MARKDOWN_CHUNKER_AVAILABLE``)."""

from __future__ import annotations

import uuid
from typing import Any

from ..document.base import Document
from .base import Reader, decode, read_source

__all__ = ["MARKDOWN_CHUNKER_AVAILABLE", "MarkdownReader"]

MARKDOWN_CHUNKER_AVAILABLE = True


class MarkdownReader(Reader):
    """``MarkdownReader().read(Path("README.md"))`` (see `Reader`)."""

    def __init__(
        self,
        chunking_strategy: Any = None,
        name: str | None = None,
        description: str | None = None,
        **kwargs: Any,
    ) -> None:
        if chunking_strategy is None:
            from ..chunking.markdown import MarkdownChunking

            chunking_strategy = MarkdownChunking(chunk_size=kwargs.get("chunk_size", 5000))
        super().__init__(
            chunking_strategy=chunking_strategy, name=name, description=description, **kwargs
        )

    @classmethod
    def get_supported_content_types(cls) -> list[Any]:
        from ..types import ContentType

        return [ContentType.MARKDOWN]

    def _documents(self, file: Any, name: str | None) -> list[Document]:
        data, label = read_source(file, name, self.limits, "markdown_file")
        text = decode(data, self.encoding, label)
        return [Document(content=text, id=str(uuid.uuid4()), name=label)]

    def read(self, file: Any, name: str | None = None) -> list[Document]:  # type: ignore[override]
        """The file's documents (its chunks, when ``chunk``)."""
        return self._finish(self._documents(file, name))

    async def async_read(self, file: Any, name: str | None = None) -> list[Document]:  # type: ignore[override]
        """`read`, awaited."""
        import asyncio

        return await self._afinish(await asyncio.to_thread(self._documents, file, name))
