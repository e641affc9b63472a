"""Agno's ``agno.knowledge.reader.pdf_reader``: `PDFReader`, a PDF's text as documents, a
document per page (``split_on_pages``, its ``meta_data["page"]``) or one for the whole,
cut by `DocumentChunking` by default.

Pages are read by the document content type (ferrule-document, with pypdf), under
`ReadLimits` as `Knowledge` reads PDFs; ``password`` (the reader's, or ``read``'s) opens an
encrypted one. ``sanitize_content`` joins the broken lines PDF extraction leaves (a blank
line still ends a paragraph). When the pages carry their own numbers (at a page's start or
end, in sequence for at least ``PAGE_NUMBERING_CORRECTNESS_RATIO_FOR_REMOVAL`` of them, the
count starting up to two off), those numbers are taken off the text, each page is marked
with ``page_start_numbering_format`` / ``page_end_numbering_format`` (``{page_nr}``; an
empty format marks nothing) and documents are numbered as the pages are.

`PDFImageReader` (text in a PDF's images, by OCR) is refused: ferrule has no OCR.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

from ferrule_kernel import InvalidInputError

from ..document.base import Document
from .base import Reader, read_source

__all__ = [
    "PAGE_END_NUMBERING_FORMAT_DEFAULT",
    "PAGE_NUMBERING_CORRECTNESS_RATIO_FOR_REMOVAL",
    "PAGE_START_NUMBERING_FORMAT_DEFAULT",
    "BasePDFReader",
    "PDFImageReader",
    "PDFReader",
    "numbered_pages",
    "sanitized",
]

PAGE_START_NUMBERING_FORMAT_DEFAULT = "<start page {page_nr}>"
PAGE_END_NUMBERING_FORMAT_DEFAULT = "<end page {page_nr}>"
PAGE_NUMBERING_CORRECTNESS_RATIO_FOR_REMOVAL = 0.4
_NUMBER_AT_EDGE = re.compile(r"^\s*(\d+)\s*|\s*(\d+)\s*$")


def sanitized(text: str) -> str:
    """PDF text with its broken lines joined (a blank line kept) and runs of spaces one."""
    text = re.sub(r"\n[ \t]+\n", " ", text)
    text = re.sub(r"(?<!\n)[ \t]*\n[ \t]*(?!\n)", " ", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _matches(found: int | None, expected: int) -> bool:
    return found is not None and (
        found == expected
        or str(found).startswith(str(expected))
        or str(found).endswith(str(expected))
    )


def numbered_pages(
    pages: list[str], start_format: str, end_format: str
) -> tuple[list[str], int | None]:
    """The pages with their own numbers taken off and marked with the formats, and the
    number of the first page (None: the pages carry no numbers; see the module docstring)."""
    found = []
    for page in pages:
        match = _NUMBER_AT_EDGE.search(page)
        found.append(int(match.group(1) or match.group(2)) if match else None)
    if sum(n is not None for n in found) < 2 or all(n is None or n > 5 for n in found):
        return pages, None
    best_shift, best = 0, -1
    for shift in (-2, -1, 0, 1, 2):
        correct = sum(_matches(n, i + shift) for i, n in enumerate(found))
        if correct > best:
            best_shift, best = shift, correct
    if best / len(pages) < PAGE_NUMBERING_CORRECTNESS_RATIO_FOR_REMOVAL:
        return pages, None
    marked = []
    for i, page in enumerate(pages):
        number = i + best_shift
        text = re.sub(rf"^\s*{number}\s*|\s*{number}\s*$", "", page)
        head = start_format.format(page_nr=number) + "\n" if start_format else ""
        tail = "\n" + end_format.format(page_nr=number) if end_format else ""
        marked.append(head + text + tail)
    return marked, best_shift


class BasePDFReader(Reader):
    """What the PDF readers share (see the module docstring)."""

    split_on_pages: bool
    page_start_numbering_format: str
    page_end_numbering_format: str
    password: str | None
    sanitize_content: bool

    def __init__(
        self,
        split_on_pages: bool = True,
        page_start_numbering_format: str | None = None,
        page_end_numbering_format: str | None = None,
        password: str | None = None,
        sanitize_content: bool = True,
        chunking_strategy: Any = None,
        **kwargs: Any,
    ) -> None:
        if chunking_strategy is None:
            from ..chunking.document import DocumentChunking

            chunking_strategy = DocumentChunking(chunk_size=kwargs.get("chunk_size", 5000))
        self.split_on_pages = split_on_pages
        self.page_start_numbering_format = (
            PAGE_START_NUMBERING_FORMAT_DEFAULT
            if page_start_numbering_format is None
            else page_start_numbering_format
        )
        self.page_end_numbering_format = (
            PAGE_END_NUMBERING_FORMAT_DEFAULT
            if page_end_numbering_format is None
            else page_end_numbering_format
        )
        self.password = password
        self.sanitize_content = sanitize_content
        super().__init__(chunking_strategy=chunking_strategy, **kwargs)

    @classmethod
    def get_supported_content_types(cls) -> list[Any]:
        from ..types import ContentType

        return [ContentType.PDF]

    def _pages(self, pdf: Any, name: str | None, password: str | None) -> tuple[list[str], str]:
        from ferrule_kit.content.parts import registry

        data, label = read_source(pdf, name, self.limits, "pdf_file")
        label = label.replace(" ", "_")
        try:
            document_content = registry.export("DocumentContent")
        except KeyError:
            raise InvalidInputError(
                "reading PDFs needs the document content type (pip install ferrule-document)",
                field="pdf",
            ) from None
        limits = self.limits
        part = document_content.from_bytes(data, filename=label, max_bytes=limits.max_file_bytes)
        pages: list[str] = part.pages(
            max_pages=limits.max_pdf_pages,
            max_chars=limits.max_pdf_chars,
            max_seconds=limits.max_pdf_seconds,
            password=self.password if password is None else password,
        )
        return pages, label

    def _documents(self, pdf: Any, name: str | None, password: str | None) -> list[Document]:
        pages, label = self._pages(pdf, name, password)
        if self.sanitize_content:
            pages = [sanitized(page) for page in pages]
        pages, first = numbered_pages(
            pages, self.page_start_numbering_format, self.page_end_numbering_format
        )
        if not self.split_on_pages:
            return [
                Document(content="\n".join(pages), id=str(uuid.uuid4()), name=label, meta_data={})
            ]
        start = 1 if first is None else first
        return [
            Document(content=page, id=str(uuid.uuid4()), name=label, meta_data={"page": number})
            for number, page in enumerate(pages, start)
        ]


class PDFReader(BasePDFReader):
    """``PDFReader(split_on_pages=True).read("report.pdf")`` (see the module docstring)."""

    def read(  # type: ignore[override]
        self, pdf: str | Path | Any = None, name: str | None = None, password: str | None = None
    ) -> list[Document]:
        """The PDF's documents (their chunks, when ``chunk``); no PDF, none."""
        if pdf is None:
            return []
        return self._finish(self._documents(pdf, name, password))

    async def async_read(  # type: ignore[override]
        self, pdf: str | Path | Any = None, name: str | None = None, password: str | None = None
    ) -> list[Document]:
        """`read`, awaited."""
        import asyncio

        if pdf is None:
            return []
        return await self._afinish(await asyncio.to_thread(self._documents, pdf, name, password))


NO_OCR = (
    "PDFImageReader reads the text in a PDF's images by OCR, which ferrule does not have: "
    "PDFReader reads a PDF's text"
)


class PDFImageReader(BasePDFReader):
    """Refused (see the module docstring): constructing one names `PDFReader`."""

    def __init__(
        self,
        split_on_pages: bool = True,
        page_start_numbering_format: str | None = None,
        page_end_numbering_format: str | None = None,
        password: str | None = None,
        sanitize_content: bool = True,
        chunking_strategy: Any = None,
        **kwargs: Any,
    ) -> None:
        raise InvalidInputError(NO_OCR, field="PDFImageReader")

    def read(  # type: ignore[override]
        self, pdf: Any, name: str | None = None, password: str | None = None
    ) -> list[Document]:
        raise InvalidInputError(NO_OCR, field="PDFImageReader")

    async def async_read(  # type: ignore[override]
        self, pdf: Any, name: str | None = None, password: str | None = None
    ) -> list[Document]:
        raise InvalidInputError(NO_OCR, field="PDFImageReader")
