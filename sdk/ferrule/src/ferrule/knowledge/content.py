"""Agno's ``agno.knowledge.content``: what a knowledge base was given and how its ingestion
went. `Content` is one content (a file, a URL, a text), as `Knowledge.get_content` lists
it from its ``contents_db`` and `Knowledge.patch_content` takes it; `ContentStatus` is
where its ingestion stands; `FileData` is a content given as bytes or text (its ``type`` a
file extension or MIME type choosing the reader); `ContentAuth` holds a PDF's password.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

__all__ = ["Content", "ContentAuth", "ContentStatus", "FileData"]


class ContentStatus(str, enum.Enum):
    """Where a content's ingestion stands: read and being embedded, stored, or failed
    (``Content.status_message`` says why)."""

    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"


@attrs.define
class FileData:
    """A content given as its bytes or text: ``type`` (``".pdf"``, ``"text/csv"``...) and
    ``filename``'s extension choose the reader; ``size`` in bytes."""

    content: str | bytes | None = None
    type: str | None = None
    filename: str | None = None
    size: int | None = None


@attrs.define
class ContentAuth:
    """What opens a protected content: a PDF's ``password``."""

    password: str | None = attrs.field(default=None, repr=False)


@attrs.define
class Content:
    """One content of a knowledge base: its ``id`` (the document's: ``file:<path>``,
    ``url:<url>``, ``text:<name>``), what it was given as (``path``, ``url``,
    ``file_data``) with its ``name``, ``description`` and ``metadata``, its ``file_type``
    and ``size``, and its ``status`` (`ContentStatus`, ``status_message``) with when it was
    added and last updated (seconds since the epoch). ``reader`` is the reader it was read
    with; ``topics``, ``remote_content`` and ``external_id`` are Agno's fields for readers
    and stores ferrule does not ship, kept as given."""

    id: str | None = None
    name: str | None = None
    description: str | None = None
    path: str | None = None
    url: str | None = None
    auth: ContentAuth | None = None
    file_data: FileData | None = None
    metadata: dict[str, Any] | None = None
    topics: list[str] | None = None
    remote_content: Any = None
    reader: Any = None
    size: int | None = None
    file_type: str | None = None
    content_hash: str | None = None
    status: ContentStatus | None = None
    status_message: str | None = None
    created_at: int | None = None
    updated_at: int | None = None
    external_id: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Content:
        """A content from a dict of its fields (those it does not name are None)."""
        fields = {f.name for f in attrs.fields(cls)}
        return cls(**{key: data.get(key) for key in fields})
