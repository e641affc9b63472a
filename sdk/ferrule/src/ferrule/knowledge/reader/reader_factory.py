"""Agno's ``agno.knowledge.reader.reader_factory``: `ReaderFactory`, the readers by key
(``"pdf"``, ``"csv"``, ``"docx"``, ``"json"``, ``"markdown"``, ``"text"``, ``"url"``), for a
file extension or a URL, and readers you add (`register_reader`).

A reader made with no arguments is made once and kept (`clear_cache` forgets them); one
made with arguments is made each time. A key ferrule has no reader for is refused, naming
the keys it has.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, ClassVar

from ferrule_kernel import InvalidInputError

from .base import Reader

__all__ = ["ReaderFactory"]

_CLASSES: dict[str, tuple[str, str]] = {
    "pdf": (".pdf_reader", "PDFReader"),
    "csv": (".csv_reader", "CSVReader"),
    "docx": (".docx_reader", "DocxReader"),
    "json": (".json_reader", "JSONReader"),
    "markdown": (".markdown_reader", "MarkdownReader"),
    "text": (".text_reader", "TextReader"),
    "url": (".url_reader", "URLReader"),
}
_EXTENSIONS = {
    "pdf": [".pdf", "application/pdf"],
    "csv": [".csv", "text/csv"],
    "docx": [".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
    "json": [".json", "application/json"],
    "markdown": [".md", ".markdown", ".mdx", "text/markdown"],
    "text": [".txt", ".text", "text/plain"],
}


class ReaderFactory:
    """The readers by key (see the module docstring)."""

    _reader_cache: ClassVar[dict[str, Reader]] = {}
    _registered: ClassVar[dict[str, Callable[..., Reader]]] = {}
    #: Each reader's name and description (and the extensions it reads), without making it.
    READER_METADATA: ClassVar[dict[str, dict[str, Any]]] = {
        "pdf": {"name": "PdfReader", "description": "Reads a PDF's text, page by page"},
        "csv": {"name": "CsvReader", "description": "Reads a CSV file, a chunk per row"},
        "docx": {"name": "DocxReader", "description": "Reads a Word document's paragraphs"},
        "json": {"name": "JsonReader", "description": "Reads a JSON file, a document per item"},
        "markdown": {
            "name": "MarkdownReader",
            "description": "Reads Markdown, cut at its headings",
        },
        "text": {"name": "TextReader", "description": "Reads a text file"},
        "url": {"name": "UrlReader", "description": "Reads the PDF, Markdown or text at a URL"},
    }

    @classmethod
    def _unknown(cls, reader_key: str) -> InvalidInputError:
        return InvalidInputError(
            f"no reader {reader_key!r}; the readers: {', '.join(cls.get_all_reader_keys())}",
            field="reader_key",
        )

    @classmethod
    def get_reader_class(cls, reader_key: str) -> type:
        """The class of reader ``reader_key``."""
        if reader_key in cls._registered:
            return type(cls._registered[reader_key]())
        if reader_key not in _CLASSES:
            raise cls._unknown(reader_key)
        module, name = _CLASSES[reader_key]
        found: type = getattr(importlib.import_module(module, __package__), name)
        return found

    @classmethod
    def create_reader(cls, reader_key: str, **kwargs: Any) -> Reader:
        """Reader ``reader_key``, made with ``kwargs`` (kept when made with none)."""
        if not kwargs and reader_key in cls._reader_cache:
            return cls._reader_cache[reader_key]
        if reader_key in cls._registered:
            reader = cls._registered[reader_key](**kwargs)
        else:
            reader = cls.get_reader_class(reader_key)(**kwargs)
        if not kwargs:
            cls._reader_cache[reader_key] = reader
        return reader

    @classmethod
    def get_reader_for_extension(cls, extension: str) -> Reader:
        """The reader of files with ``extension`` (``".pdf"``, or a MIME type); text for
        one no reader claims."""
        wanted = extension.lower()
        for key, extensions in _EXTENSIONS.items():
            if wanted in extensions:
                return cls.create_reader(key)
        for key, meta in cls.READER_METADATA.items():
            if wanted in meta.get("extensions", ()):
                return cls.create_reader(key)
        return cls.create_reader("text")

    @classmethod
    def get_reader_for_url(cls, url: str) -> Reader:
        """The reader of ``url`` (`URLReader`)."""
        return cls.create_reader("url")

    @classmethod
    def get_all_reader_keys(cls) -> list[str]:
        """Every reader's key, the URL reader first."""
        keys = sorted(set(_CLASSES) | set(cls._registered))
        return ["url", *(k for k in keys if k != "url")]

    @classmethod
    def create_all_readers(cls) -> dict[str, Reader]:
        """A reader of each key."""
        return {key: cls.create_reader(key) for key in cls.get_all_reader_keys()}

    @classmethod
    def clear_cache(cls) -> None:
        """Forget the readers made so far."""
        cls._reader_cache.clear()

    @classmethod
    def register_reader(
        cls,
        key: str,
        reader_method: Callable[..., Reader],
        name: str,
        description: str,
        extensions: list[str] | None = None,
    ) -> None:
        """Add reader ``key``, made by ``reader_method(**kwargs)``; ``extensions`` are the
        ones `get_reader_for_extension` gives it for."""
        if not callable(reader_method):
            raise InvalidInputError(
                "reader_method makes the reader: a function", field="reader_method"
            )
        cls._registered[key] = reader_method
        cls._reader_cache.pop(key, None)
        meta: dict[str, Any] = {"name": name, "description": description}
        if extensions:
            meta["extensions"] = [e.lower() for e in extensions]
        cls.READER_METADATA[key] = meta
