"""Agno's ``agno.knowledge.types``: `ContentType`, the kinds of content a reader reads (by
Agno's values: file extensions, and ``"file"``, ``"url"``, ``"text"``): the ones ferrule's
readers read."""

from __future__ import annotations

import enum

__all__ = ["ContentType"]


class ContentType(str, enum.Enum):
    """What a reader reads (`Reader.get_supported_content_types`)."""

    FILE = "file"
    URL = "url"
    TEXT = "text"
    PDF = ".pdf"
    TXT = ".txt"
    JSON = ".json"
    MARKDOWN = ".md"
    DOCX = ".docx"
    CSV = ".csv"
