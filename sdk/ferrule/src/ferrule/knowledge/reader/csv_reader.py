"""Agno's ``agno.knowledge.reader.csv_reader``: `CSVReader`, a CSV file as text, a line per
row with its cells joined by ``", "``, cut by `RowChunking` (a chunk per row) by default.
``async_read`` makes a document per ``page_size`` rows (``meta_data["page"]``, from 1)."""

from __future__ import annotations

import csv
import io
import uuid
from typing import Any

from ..document.base import Document
from .base import Reader, decode, read_source

__all__ = ["CSVReader"]


def _rows(text: str, delimiter: str, quotechar: str) -> list[str]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quotechar=quotechar)
    return [", ".join(cell.strip() for cell in row) for row in reader]


class CSVReader(Reader):
    """``CSVReader().read(Path("rows.csv"), delimiter=";")`` (see `Reader`)."""

    def __init__(self, chunking_strategy: Any = None, **kwargs: Any) -> None:
        if chunking_strategy is None:
            from ..chunking.row import RowChunking

            chunking_strategy = RowChunking()
        super().__init__(chunking_strategy=chunking_strategy, **kwargs)

    @classmethod
    def get_supported_content_types(cls) -> list[Any]:
        from ..types import ContentType

        return [ContentType.CSV]

    def _lines(
        self, file: Any, delimiter: str, quotechar: str, name: str | None
    ) -> tuple[list[str], str]:
        data, label = read_source(file, name, self.limits, "csv_file")
        return _rows(decode(data, self.encoding, label), delimiter, quotechar), label

    def read(  # type: ignore[override]
        self, file: Any, delimiter: str = ",", quotechar: str = '"', name: str | None = None
    ) -> list[Document]:
        """The file as one document (its rows, when ``chunk``)."""
        lines, label = self._lines(file, delimiter, quotechar, name)
        return self._finish([Document(content="\n".join(lines), id=str(uuid.uuid4()), name=label)])

    async def async_read(  # type: ignore[override]
        self,
        file: Any,
        delimiter: str = ",",
        quotechar: str = '"',
        page_size: int = 1000,
        name: str | None = None,
    ) -> list[Document]:
        """The file as a document per ``page_size`` rows (each chunked, when ``chunk``)."""
        import asyncio

        lines, label = await asyncio.to_thread(self._lines, file, delimiter, quotechar, name)
        size = max(1, page_size)
        pages = [lines[i : i + size] for i in range(0, len(lines), size)] or [[]]
        documents = [
            Document(
                content="\n".join(page),
                id=str(uuid.uuid4()),
                name=label,
                meta_data={"page": number},
            )
            for number, page in enumerate(pages, 1)
        ]
        return await self._afinish(documents)
