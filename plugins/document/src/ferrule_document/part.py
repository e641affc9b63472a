"""The document part: its class, its shape on ferrule's wire (OpenAI's ``file`` part) and
its text, for models that read text only."""

from __future__ import annotations

import base64
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import check_fields, data_url, decoded_size, parse_data_url, required

PDF = "application/pdf"
TEXT = "text/plain"
#: The document types: PDF and plain text (UTF-8).
MIME_TYPES = (PDF, TEXT)


@attrs.frozen
class DocumentPart:
    """A document: base64 data, its MIME type (`MIME_TYPES`) and, optionally, its file name."""

    data: str
    mime_type: str
    filename: str | None = None
    type: Literal["document"] = "document"

    def __attrs_post_init__(self) -> None:
        if self.mime_type not in MIME_TYPES:
            raise InvalidInputError(
                f"a document is PDF or plain text ({', '.join(MIME_TYPES)}); got "
                f"{self.mime_type or 'no MIME type'}",
                field="file.file_data",
            )

    def to_bytes(self) -> bytes:
        return base64.b64decode(self.data)

    @property
    def size(self) -> int:
        """Bytes of the document once decoded, without decoding it."""
        return decoded_size(self.data)

    @property
    def media_format(self) -> str:
        """The MIME type, which providers' policies name."""
        return self.mime_type

    @property
    def data_url(self) -> str:
        return data_url(self.mime_type, self.data)

    def text(
        self,
        *,
        max_pages: int | None = None,
        max_chars: int | None = None,
        max_seconds: float | None = None,
        password: str | None = None,
    ) -> str:
        """The document's text: a PDF's extracted text, page after page (`pages`, joined
        by blank lines), or the plain text decoded as UTF-8."""
        if self.mime_type == TEXT:
            return self.to_bytes().decode("utf-8", errors="replace")
        pages = self.pages(
            max_pages=max_pages, max_chars=max_chars, max_seconds=max_seconds, password=password
        )
        return "\n\n".join(pages).strip()

    def pages(
        self,
        *,
        max_pages: int | None = None,
        max_chars: int | None = None,
        max_seconds: float | None = None,
        password: str | None = None,
    ) -> list[str]:
        """A PDF's text, page by page (pypdf, imported now; plain text: one page).
        ``password`` opens an encrypted PDF (one that opens with the empty password needs
        none).

        A PDF is hostile input: one pypdf cannot read (or cannot open with the password),
        or whose stream would inflate past pypdf's limit (75 MB a stream: a decompression
        bomb), raises `InvalidInputError` naming the file, as does one over a bound the
        caller sets (each None: none): ``max_pages``, ``max_chars`` of extracted text,
        ``max_seconds`` of extraction (checked after each page). ``details["reason"]`` says
        which: ``"unreadable"``, ``"encrypted"``, ``"pages"``, ``"text_size"`` or ``"time"``.
        """
        data = self.to_bytes()
        if self.mime_type == TEXT:
            return [data.decode("utf-8", errors="replace")]
        import io
        import time

        from pypdf import PdfReader

        what = f"the PDF{f' {self.filename}' if self.filename else ''}"

        def refuse(message: str, reason: str) -> InvalidInputError:
            return InvalidInputError(message, field="file.file_data", reason=reason)

        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        texts: list[str] = []
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(password or ""):
                raise refuse(
                    f"{what} is encrypted: "
                    + ("the password does not open it" if password else "give its password"),
                    "encrypted",
                )
            pages = reader.pages
            if max_pages is not None and len(pages) > max_pages:
                raise refuse(f"{what} has {len(pages)} pages; the limit is {max_pages}", "pages")
            size = 0
            for number, page in enumerate(pages, 1):
                texts.append(page.extract_text())
                size += len(texts[-1])
                if max_chars is not None and size > max_chars:
                    raise refuse(
                        f"{what} holds over {max_chars} characters of text (at page {number})",
                        "text_size",
                    )
                if deadline is not None and time.monotonic() > deadline:
                    raise refuse(
                        f"{what} took over {max_seconds:g} s to read (at page {number})", "time"
                    )
        except InvalidInputError:
            raise
        except Exception as exc:  # any failure of the parser on hostile bytes, bombs included
            raise refuse(f"cannot read {what}: {type(exc).__name__}: {exc}", "unreadable") from None
        return texts


_FIELDS = frozenset({"type", "file"})
_FILE_FIELDS = frozenset({"filename", "file_data"})


def structure(data: dict[str, Any]) -> DocumentPart:
    """``{"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,..."}}``
    (``filename`` optional). Uploaded files (``file_id``) are not supported."""
    check_fields(data, _FIELDS)
    file = required(data, "file", dict, "file")
    if "file_id" in file:
        raise InvalidInputError(
            "uploaded files (file_id) are not supported; send the file's data as file_data",
            field="file.file_id",
        )
    check_fields(file, _FILE_FIELDS, "file")
    mime_type, payload = parse_data_url(
        required(file, "file_data", str, "file.file_data"), "file.file_data"
    )
    filename = required(file, "filename", str, "file.filename") if "filename" in file else None
    return DocumentPart(data=payload, mime_type=mime_type or "", filename=filename)


def unstructure(part: DocumentPart) -> dict[str, Any]:
    file = {"file_data": part.data_url}
    if part.filename is not None:
        file["filename"] = part.filename
    return {"type": "file", "file": file}
