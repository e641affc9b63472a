"""Agno's ``agno.knowledge.reader.docx_reader``: `DocxReader`, a Word document (.docx) as
one document: its paragraphs' text, a blank line between paragraphs, cut by
`DocumentChunking` by default.

The file is read with the standard library (a .docx is a zip of XML): no Word library.
It is hostile input: besides the file's size bound (`ReadLimits`), the XML it holds is
read up to ``max_pdf_chars`` characters' worth of bytes (no zip bomb), and XML with a
document type declaration (entities: the billion-laughs bomb) is refused.
"""

from __future__ import annotations

import io
import uuid
import zipfile
from typing import Any
from xml.etree import ElementTree

from ferrule_kernel import InvalidInputError

from ..document.base import Document
from .base import Reader, read_source

__all__ = ["DocxReader", "docx_text"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def docx_text(data: bytes, label: str, max_xml_bytes: int) -> str:
    """The paragraphs' text of a .docx file's bytes."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            with archive.open("word/document.xml") as part:
                xml = part.read(max_xml_bytes + 1)
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise InvalidInputError(f"{label} is not a .docx file: {exc}", field="file") from None
    if len(xml) > max_xml_bytes:
        raise InvalidInputError(
            f"{label} holds over {max_xml_bytes} bytes of text markup",
            field="file",
            reason="text_size",
        )
    if b"<!DOCTYPE" in xml[:4096].upper():
        raise InvalidInputError(f"{label}: a document type declaration is refused", field="file")
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        raise InvalidInputError(f"{label} is not a .docx file: {exc}", field="file") from None
    paragraphs = []
    for paragraph in root.iter(f"{_W}p"):
        pieces = []
        for node in paragraph.iter():
            if node.tag == f"{_W}t":
                pieces.append(node.text or "")
            elif node.tag == f"{_W}tab":
                pieces.append("\t")
            elif node.tag in (f"{_W}br", f"{_W}cr"):
                pieces.append("\n")
        paragraphs.append("".join(pieces))
    return "\n\n".join(paragraphs)


class DocxReader(Reader):
    """``DocxReader().read(Path("report.docx"))`` (see `Reader`)."""

    def __init__(self, chunking_strategy: Any = None, **kwargs: Any) -> None:
        if chunking_strategy is None:
            from ..chunking.document import DocumentChunking

            chunking_strategy = DocumentChunking(chunk_size=kwargs.get("chunk_size", 5000))
        super().__init__(chunking_strategy=chunking_strategy, **kwargs)

    @classmethod
    def get_supported_content_types(cls) -> list[Any]:
        from ..types import ContentType

        return [ContentType.DOCX]

    def _documents(self, file: Any, name: str | None) -> list[Document]:
        data, label = read_source(file, name, self.limits, "docx_file")
        text = docx_text(data, label, self.limits.max_pdf_chars * 4)
        return [Document(content=text, id=str(uuid.uuid4()), name=label)]

    def read(self, file: Any, name: str | None = None) -> list[Document]:  # type: ignore[override]
        """The file's documents (its chunks, when ``chunk``)."""
        return self._finish(self._documents(file, name))

    async def async_read(self, file: Any, name: str | None = None) -> list[Document]:  # type: ignore[override]
        """`read`, awaited."""
        import asyncio

        return await self._afinish(await asyncio.to_thread(self._documents, file, name))
