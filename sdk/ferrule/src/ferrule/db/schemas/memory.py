"""Agno's ``agno.db.schemas.memory``: `UserMemory`, a fact about a user as Agno's programs
read it (``memory``, ``topics``, ``user_id``...; times as epoch seconds). It is a view of the
engine's record (`ferrule_kit.stores.storage.UserMemory`): `from_kit` / `to_kit` translate."""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from ferrule_kit.stores.storage import UserMemory as KitMemory

__all__ = ["UserMemory", "epoch_seconds"]


def epoch_seconds(value: Any) -> int | None:
    """A time as whole epoch seconds: a number, a datetime or an ISO date."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return int(value.timestamp())
    if isinstance(value, str):
        return int(datetime.fromisoformat(value).timestamp())
    return int(value)


def _created(value: Any) -> int:
    seconds = epoch_seconds(value)
    return int(time.time()) if seconds is None else seconds


@attrs.define
class UserMemory:
    """One memory about a user (``input``: what it was made from; ``feedback``: a note)."""

    memory: str
    memory_id: str | None = None
    topics: list[str] | None = None
    user_id: str | None = None
    input: str | None = None
    created_at: int | None = attrs.field(default=None, converter=_created)
    updated_at: int | None = attrs.field(default=None, converter=epoch_seconds)
    feedback: str | None = None
    agent_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The set fields, times as ISO dates (``updated_at``: ``created_at`` when unset)."""
        created = (
            datetime.fromtimestamp(self.created_at).isoformat()
            if self.created_at is not None
            else None
        )
        updated = (
            datetime.fromtimestamp(self.updated_at).isoformat()
            if self.updated_at is not None
            else created
        )
        fields = {
            "memory_id": self.memory_id,
            "memory": self.memory,
            "topics": self.topics,
            "created_at": created,
            "updated_at": updated,
            "input": self.input,
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "feedback": self.feedback,
        }
        return {k: v for k, v in fields.items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UserMemory:
        known = {f.name for f in attrs.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @classmethod
    def from_kit(cls, memory: KitMemory) -> UserMemory:
        """Agno's view of the engine's record."""
        return cls(
            memory=memory.memory,
            memory_id=memory.memory_id,
            topics=list(memory.topics),
            user_id=memory.user_id,
            created_at=memory.created_at or None,
            updated_at=memory.updated_at or None,
            agent_id=memory.agent_id,
        )
