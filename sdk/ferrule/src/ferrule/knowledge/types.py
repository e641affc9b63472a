"""Agno's ``agno.knowledge.types``: `ContentType`, the kinds of content a reader reads (by
Agno's values: file extensions, and ``"file"``, ``"url"``, ``"text"``, ``"topic"``,
``"youtube"``), `get_content_type_enum`, and `KnowledgeFilter`, one metadata filter as a
key and a value.

Every kind is named, as in Agno; what ferrule's readers read is what each says of itself
(`ferrule.knowledge.reader.base.Reader.get_supported_content_types`).
"""

from __future__ import annotations

import enum
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

__all__ = ["ContentType", "KnowledgeFilter", "get_content_type_enum"]


class ContentType(str, enum.Enum):
    """A kind of content (see the module docstring)."""

    FILE = "file"
    URL = "url"
    TEXT = "text"
    TOPIC = "topic"
    YOUTUBE = "youtube"
    PDF = ".pdf"
    TXT = ".txt"
    DOC = ".doc"
    JSON = ".json"
    VTT = ".vtt"
    MARKDOWN = ".md"
    DOCX = ".docx"
    DOTX = ".dotx"
    DOCM = ".docm"
    DOTM = ".dotm"
    PPTX = ".pptx"
    POTX = ".potx"
    PPSX = ".ppsx"
    POTM = ".potm"
    PPSM = ".ppsm"
    PPTM = ".pptm"
    HTML = ".html"
    HTM = ".htm"
    XHTML = ".xhtml"
    XML = ".xml"
    XML_JATS = ".nxml"
    XML_XBRL = ".xbrl"
    ADOC = ".adoc"
    ASCIIDOC = ".asciidoc"
    ASC = ".asc"
    METS_GBS = ".tar.gz"
    LATEX = ".tex"
    LATEX_ALT = ".latex"
    IMAGE_PNG = ".png"
    IMAGE_JPEG = ".jpeg"
    IMAGE_JPG = ".jpg"
    IMAGE_TIFF = ".tiff"
    IMAGE_TIF = ".tif"
    IMAGE_BMP = ".bmp"
    IMAGE_WEBP = ".webp"
    CSV = ".csv"
    XLSX = ".xlsx"
    XLS = ".xls"
    XLSM = ".xlsm"
    AUDIO_WAV = ".wav"
    AUDIO_MP3 = ".mp3"
    AUDIO_M4A = ".m4a"
    AUDIO_AAC = ".aac"
    AUDIO_OGG = ".ogg"
    AUDIO_FLAC = ".flac"
    VIDEO_MP4 = ".mp4"
    VIDEO_AVI = ".avi"
    VIDEO_MOV = ".mov"


def get_content_type_enum(content_type_str: str) -> ContentType:
    """The `ContentType` of a value (``".pdf"``, ``"url"``...); another is refused, naming
    the values there are."""
    try:
        return ContentType(content_type_str)
    except ValueError:
        known = ", ".join(t.value for t in ContentType)
        raise InvalidInputError(
            f"no content type {content_type_str!r}; the content types: {known}",
            field="content_type_str",
        ) from None


def _key(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str):
        raise InvalidInputError(f"expected a string, got {type(value).__name__}", field="key")


@attrs.define(kw_only=True)
class KnowledgeFilter:
    """One metadata filter: the chunks whose ``key`` is ``value``."""

    key: str = attrs.field(validator=_key)
    value: Any
