"""`URLReader`: the document at an http(s) URL (a PDF, Markdown or text), fetched only where
the address policy allows, as `Knowledge.add_content(url=...)` fetches it (every redirect
hop checked), then chunked as a file of its kind would be. What
`ReaderFactory.get_reader_for_url` gives; ferrule has no web crawler (Agno's
``WebsiteReader``)."""

from __future__ import annotations

import uuid
from typing import Any

from ..document.base import Document
from .base import Reader

__all__ = ["URLReader"]


class URLReader(Reader):
    """``URLReader().read("https://example.org/guide.md")`` (see the module docstring)."""

    @classmethod
    def get_supported_content_types(cls) -> list[Any]:
        from ..types import ContentType

        return [ContentType.URL]

    async def _documents(self, url: str, name: str | None) -> list[Document]:
        from ..readers import read_url

        source = await read_url(url, name, {}, self.limits)
        if self.chunking_strategy is None and source.kind == "markdown":
            from ..chunking.markdown import MarkdownChunking

            self.chunking_strategy = MarkdownChunking(chunk_size=self.chunk_size)
        return [
            Document(
                content=source.text,
                id=str(uuid.uuid4()),
                name=source.name,
                meta_data={"url": url},
                content_origin=url,
            )
        ]

    def read(
        self, obj: Any, name: str | None = None, password: str | None = None
    ) -> list[Document]:
        """The documents at URL ``obj`` (their chunks, when ``chunk``)."""
        from ...shared_runtime import default_runtime

        documents: list[Document] = default_runtime().sync_bridge.run(
            self._documents(str(obj), name)
        )
        return self._finish(documents)

    async def async_read(
        self, obj: Any, name: str | None = None, password: str | None = None
    ) -> list[Document]:
        """`read`, awaited."""
        return await self._afinish(await self._documents(str(obj), name))
