"""Reading a content with a reader of Agno's (`ferrule.knowledge.reader`): the ``reader=``
given to `Knowledge.insert`, or one of the knowledge base's ``readers`` chosen by a file's
extension (`ReaderChoice`).

A reader turns a file, a download or a text into `Document` s, cut by its own chunking
strategy; they become one `ferrule.knowledge.readers.Source` whose ``pieces`` are those
documents, stored as they are (each chunk with the metadata its reader gave it). Without
a reader, a content is read and cut as `Knowledge` does by default
(`ferrule.knowledge.readers`, `ferrule.knowledge.chunking`).
"""

from __future__ import annotations

import inspect
import io
import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .readers import (
    Fetched,
    ReadWith,
    Source,
    file_document_id,
    read_text,
    url_document_id,
)

__all__ = ["ReaderChoice", "check_reader", "reader_source"]


def check_reader(reader: Any, field: str = "reader") -> Any:
    """``reader`` when it reads (a `ferrule.knowledge.reader.base.Reader`, or anything
    with Agno's ``read(obj, name=...)``), else `InvalidInputError` naming ``field``."""
    if reader is not None and not callable(getattr(reader, "read", None)):
        raise InvalidInputError(
            f"expected a reader (PDFReader(), CSVReader()... of ferrule.knowledge.reader), "
            f"got {type(reader).__name__}",
            field=field,
        )
    return reader


def _label(reader: Any) -> str:
    """What a reader is, for a document's version: its class and its settings."""
    settings = {k: v for k, v in vars(reader).items() if not k.startswith("_") and k != "limits"}
    return json.dumps([type(reader).__qualname__, settings], sort_keys=True, default=repr)


def reader_source(
    reader: Any,
    obj: Any,
    *,
    document_id: str,
    name: str,
    metadata: dict[str, Any],
    size: int | None,
    type: str | None,
    password: str | None = None,
) -> Source:
    """The documents ``reader`` reads of ``obj`` (a path, or an open binary file) as one
    `Source` of pieces. Blocks: run it in a worker thread."""
    arguments: dict[str, Any] = {"name": name}
    if password is not None and "password" in inspect.signature(reader.read).parameters:
        arguments["password"] = password
    documents = reader.read(obj, **arguments)
    pieces = tuple(
        (str(document.content), dict(getattr(document, "meta_data", None) or {}))
        for document in documents or ()
        if getattr(document, "content", None)
    )
    return Source(
        document_id,
        name,
        "\n\n".join(piece for piece, _ in pieces),
        metadata,
        pieces=pieces,
        size=size,
        type=type,
        reader=_label(reader),
    )


@attrs.frozen
class ReaderChoice:
    """Which reader reads what: ``reader`` (given for a content: every file of it), else
    a reader of ``readers`` (the knowledge base's own) that says it reads the file's
    extension; None: `Knowledge`'s default reading."""

    reader: Any = None
    readers: Mapping[str, Any] = attrs.Factory(dict)
    password: str | None = None

    def for_extension(self, extension: str) -> Any:
        if self.reader is not None:
            return self.reader
        wanted = extension.lower()
        for reader in self.readers.values():
            supported = getattr(reader, "get_supported_content_types", None)
            kinds = supported() if callable(supported) else ()
            if any(getattr(k, "value", k) == wanted for k in kinds):
                return reader
        return None

    def read_with(self) -> ReadWith | None:
        """The files' reader for `ferrule.knowledge.readers.read_path` (None: none)."""
        if self.reader is None and not self.readers:
            return None

        def read(file: Path, name: str, metadata: dict[str, Any]) -> Source | None:
            reader = self.for_extension(file.suffix)
            if reader is None:
                return None
            return reader_source(
                reader,
                file,
                document_id=file_document_id(file),
                name=name,
                metadata=metadata,
                size=file.stat().st_size,
                type=file.suffix.lower(),
                password=self.password,
            )

        return read

    def url_source(self, fetched: Fetched, metadata: dict[str, Any]) -> Source | None:
        """A download read by the chosen reader (by the URL's extension), or None."""
        reader = self.for_extension(PurePosixPath(fetched.path).suffix)
        if reader is None:
            return None
        return reader_source(
            reader,
            _named(fetched.data, fetched.label),
            document_id=url_document_id(fetched.shown),
            name=fetched.label,
            metadata=metadata,
            size=len(fetched.data),
            type="url",
            password=self.password,
        )

    def text_source(self, text: str, name: str | None, metadata: dict[str, Any]) -> Source:
        """A text, read by the chosen ``reader`` when there is one."""
        plain = read_text(text, name, metadata)
        if self.reader is None:
            return plain
        return reader_source(
            self.reader,
            _named(text.encode("utf-8", "surrogatepass"), plain.name),
            document_id=plain.document_id,
            name=plain.name,
            metadata=metadata,
            size=plain.size,
            type=plain.type,
            password=self.password,
        )


def _named(data: bytes, name: str) -> io.BytesIO:
    """An open file of ``data`` whose name is ``name`` (readers name documents by it)."""
    file = io.BytesIO(data)
    file.name = name
    return file
