"""`DocumentContent`: document parts from a file, bytes or text, the type sniffed from the bytes."""

from __future__ import annotations

import base64
import os

from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import media_bytes, read_media_file

from .part import PDF, TEXT, DocumentPart

__all__ = ["MAX_DOCUMENT_BYTES", "DocumentContent", "sniff_document_mime"]

#: The largest document any provider ferrule supports takes (OpenAI and Anthropic: 32 MB
#: per request).
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024


def sniff_document_mime(data: bytes) -> str | None:
    """``application/pdf`` for a PDF, ``text/plain`` for UTF-8 text, else None."""
    if data.startswith(b"%PDF-"):
        return PDF
    if b"\x00" in data:
        return None  # UTF-16 or binary: not the plain text providers read
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return TEXT


class DocumentContent:
    """Builds document parts; see the module docstring."""

    @staticmethod
    def from_bytes(
        data: bytes,
        mime_type: str | None = None,
        *,
        filename: str | None = None,
        max_bytes: int = MAX_DOCUMENT_BYTES,
    ) -> DocumentPart:
        """Document bytes; the type is sniffed from them (a given ``mime_type`` must agree)."""
        data = media_bytes(data, "the document", max_bytes)
        sniffed = sniff_document_mime(data)
        if sniffed is None:
            raise InvalidInputError(
                "not a PDF or UTF-8 text; for images use ImageContent, for audio AudioContent",
                field="data",
            )
        if mime_type is not None and mime_type.lower() != sniffed:
            raise InvalidInputError(
                f"mime_type says {mime_type} but the bytes are {sniffed}", field="mime_type"
            )
        return DocumentPart(
            data=base64.b64encode(data).decode("ascii"), mime_type=sniffed, filename=filename
        )

    @staticmethod
    def from_path(
        path: str | os.PathLike[str], *, max_bytes: int = MAX_DOCUMENT_BYTES
    ) -> DocumentPart:
        """A PDF or text file; its type comes from its bytes, its ``filename`` from its name."""
        data = read_media_file(path, max_bytes)
        return DocumentContent.from_bytes(
            data, filename=os.path.basename(os.fspath(path)), max_bytes=max_bytes
        )

    @staticmethod
    def from_text(text: str, *, filename: str | None = None) -> DocumentPart:
        """Text as a plain-text document (sent as a document where the provider reads
        documents, as text elsewhere)."""
        if not isinstance(text, str):
            raise InvalidInputError(f"expected a string, got {type(text).__name__}", field="text")
        return DocumentContent.from_bytes(text.encode("utf-8"), TEXT, filename=filename)
