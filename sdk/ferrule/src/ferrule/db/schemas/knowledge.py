"""Agno's ``agno.db.schemas.knowledge``: `KnowledgeRow`, the record of one content added to
a knowledge base (its name, description, metadata, type, size, status)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import attrs

__all__ = ["KnowledgeRow"]


@attrs.define(kw_only=True)
class KnowledgeRow:
    """One content of a knowledge base; ``id`` is made when not given."""

    id: str | None = None
    name: str
    description: str
    metadata: dict[str, Any] | None = None
    type: str | None = None
    size: int | None = None
    linked_to: str | None = None
    access_count: int | None = None
    status: str | None = None
    status_message: str | None = None
    created_at: int | None = None
    updated_at: int | None = None
    external_id: str | None = None

    def __attrs_post_init__(self) -> None:
        self.generate_id()

    def generate_id(self) -> KnowledgeRow:
        """Give the row an id when it has none; the row."""
        if self.id is None:
            self.id = str(uuid.uuid4())
        return self

    def to_dict(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        out["updated_at"] = (
            datetime.fromtimestamp(self.updated_at).isoformat() if self.updated_at else None
        )
        return out
