"""What `Knowledge` returns: found chunks (`Document`), what an insertion did
(`ContentResult`, with a `ReadFailure` per bad file) and the references a run used
(`MessageReferences`).

`Document` is Agno's ``agno.knowledge.document.Document`` too (`ferrule.knowledge.document.base`)."""

from __future__ import annotations

from typing import Any

import attrs

from .base import Document

__all__ = ["ContentResult", "Document", "MessageReferences", "ReadFailure"]


@attrs.frozen
class ReadFailure:
    """A file of a folder that was not read, the rest being read: its ``source`` (path),
    the ``reason`` (``"unreadable"``, ``"file_size"``, ``"pages"``, ``"text_size"``,
    ``"time"``, ``"outside_folder"``) and a ``message`` naming the file."""

    source: str
    reason: str
    message: str


@attrs.define
class ContentResult:
    """What an insertion did, per document: ``added`` (new), ``replaced`` (changed: its old
    chunks gone), ``skipped`` (unchanged, or nothing to read), ``failed`` (files of a
    folder that could not be read, each a `ReadFailure`), and ``chunks`` written."""

    added: list[str] = attrs.Factory(list)
    replaced: list[str] = attrs.Factory(list)
    skipped: list[str] = attrs.Factory(list)
    chunks: int = 0
    failed: list[ReadFailure] = attrs.Factory(list)

    def merge(self, other: ContentResult) -> None:
        self.added += other.added
        self.replaced += other.replaced
        self.skipped += other.skipped
        self.chunks += other.chunks
        self.failed += other.failed


@attrs.define
class MessageReferences:
    """The knowledge a run used (Agno's ``RunOutput.references``): the ``query`` searched,
    the ``references`` found (`Document.to_dict` shapes) and the search's ``time`` in
    seconds."""

    query: str
    references: list[dict[str, Any]] = attrs.Factory(list)
    time: float | None = None
