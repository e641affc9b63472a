"""Agno's ``agno.knowledge.reader``: the readers (`Reader`, and per format in its modules:
`text_reader`, `markdown_reader`, `pdf_reader`, `csv_reader`, `json_reader`,
`docx_reader`, `url_reader`) and `ReaderFactory`. The names load on first access."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kit.content.parts import lazy_attributes

if TYPE_CHECKING:
    from .base import Reader
    from .reader_factory import ReaderFactory

__all__ = ["Reader", "ReaderFactory"]

__getattr__ = lazy_attributes(__name__, {"Reader": ".base", "ReaderFactory": ".reader_factory"})
