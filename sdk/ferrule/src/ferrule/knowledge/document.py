"""What `Knowledge` returns: found chunks (`Document`), what an insertion did
(`ContentResult`, with a `ReadFailure` per bad file) and the references a run used
(`MessageReferences`)."""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["ContentResult", "Document", "MessageReferences", "ReadFailure"]


@attrs.define
class Document:
    """One chunk found in a knowledge base, with Agno's names: ``content`` (its text),
    ``name`` (its document's), ``meta_data``, ``id`` (the chunk's), ``content_id`` (its
    document's, what `Knowledge.remove_content_by_id` takes) and the search's ``score``
    (higher is nearer). Ailoy 0.2 reads ``text`` and ``title``."""

    content: str
    id: str | None = None
    name: str | None = None
    meta_data: dict[str, Any] = attrs.Factory(dict)
    content_id: str | None = None
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Agno's shape: ``name``, ``meta_data`` and ``content`` (what a model is shown)."""
        out: dict[str, Any] = {}
        if self.name is not None:
            out["name"] = self.name
        if self.meta_data:
            out["meta_data"] = self.meta_data
        out["content"] = self.content
        return out

    @property
    def text(self) -> str:
        """Ailoy 0.2's name of `content`."""
        return self.content

    @property
    def title(self) -> str | None:
        """Ailoy 0.2's name of `name`."""
        return self.name

    def to_ailoy(self) -> dict[str, Any]:
        """Ailoy 0.2's shape of a document: ``id``, ``text`` and ``title`` when it has one."""
        out: dict[str, Any] = {"id": self.id, "text": self.content}
        if self.name is not None:
            out["title"] = self.name
        return out


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
