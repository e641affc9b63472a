"""Agno's ``agno.knowledge.reader.json_reader``: `JSONReader`, a JSON file as documents: an
object is one, a list one per item (its ``meta_data["page"]``, from 1), each the item's
JSON; cut by `FixedSizeChunking` by default."""

from __future__ import annotations

import json
import uuid
from typing import Any

from ferrule_kernel import InvalidInputError

from ..document.base import Document
from .base import Reader, decode, read_source

__all__ = ["JSONReader"]


class JSONReader(Reader):
    """``JSONReader().read(Path("items.json"))`` (see `Reader`)."""

    def __init__(self, chunk: bool = True, chunking_strategy: Any = None, **kwargs: Any) -> None:
        if chunking_strategy is None:
            from ..chunking.fixed import FixedSizeChunking

            chunking_strategy = FixedSizeChunking(chunk_size=kwargs.get("chunk_size", 5000))
        super().__init__(chunk=chunk, chunking_strategy=chunking_strategy, **kwargs)

    @classmethod
    def get_supported_content_types(cls) -> list[Any]:
        from ..types import ContentType

        return [ContentType.JSON]

    def _documents(self, path: Any, name: str | None) -> list[Document]:
        data, label = read_source(path, name, self.limits, "json_file")
        try:
            contents = json.loads(decode(data, self.encoding, label))
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"{label} is not JSON: {exc}", field="path") from None
        items = [contents] if isinstance(contents, dict) else contents
        if not isinstance(items, list):
            items = [items]
        return [
            Document(
                content=json.dumps(item, ensure_ascii=False),
                id=str(uuid.uuid4()),
                name=label,
                meta_data={"page": page},
            )
            for page, item in enumerate(items, 1)
        ]

    def read(self, path: Any, name: str | None = None) -> list[Document]:  # type: ignore[override]
        """The file's documents (their chunks, when ``chunk``)."""
        return self._finish(self._documents(path, name))

    async def async_read(self, path: Any, name: str | None = None) -> list[Document]:  # type: ignore[override]
        """`read`, awaited."""
        import asyncio

        return await self._afinish(await asyncio.to_thread(self._documents, path, name))
