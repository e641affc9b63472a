"""Agno's ``agno.db.utils``: what a db's records need to become objects and JSON again.

`deserialize_session` and its twins read a session's dict (ferrule's sessions are an
agent's: a team's or a workflow's is refused); `serialize_session_json_fields` /
`deserialize_session_json_fields` turn a session's JSON fields into text and back, as a
store keeps them; `json_serializer` writes JSON of what the standard encoder cannot
(`CustomJSONEncoder`: dates, UUIDs, objects with ``to_dict``); `db_from_dict` remakes a db
from its ``to_dict()``.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any
from uuid import UUID

from ferrule_kernel import InvalidInputError

from ..session.agent import AgentSession
from .base import AsyncBaseDb, BaseDb, SessionType

__all__ = [
    "DB_TABLE_NAME_KEYS",
    "CustomJSONEncoder",
    "db_from_dict",
    "deserialize_session",
    "deserialize_session_by_type",
    "deserialize_session_json_fields",
    "deserialize_sessions",
    "detect_session_type",
    "get_sort_value",
    "json_serializer",
    "resolve_session_type",
    "serialize_session_json_fields",
]

#: The keys of a db's dict that name its tables.
DB_TABLE_NAME_KEYS: frozenset[str] = frozenset(
    {"session_table", "memory_table", "metrics_table", "knowledge_table"}
)
#: A session's fields kept as JSON text by a store.
JSON_FIELDS = ("session_data", "agent_data", "metadata", "runs", "summary")


class CustomJSONEncoder(json.JSONEncoder):
    """JSON of dates (ISO), UUIDs (text) and objects with a ``to_dict``."""

    def default(self, obj: Any) -> Any:
        if isinstance(obj, UUID):
            return str(obj)
        if isinstance(obj, (date, datetime)):
            return obj.isoformat()
        to_dict = getattr(obj, "to_dict", None)
        if callable(to_dict):
            return to_dict()
        return super().default(obj)


def json_serializer(obj: Any) -> str:
    return json.dumps(obj, cls=CustomJSONEncoder)


def detect_session_type(record: dict[str, Any]) -> str:
    """``"agent"``, ``"team"`` or ``"workflow"``: the record's stored kind, else the kind its
    ids say, else ``"agent"``."""
    kind = record.get("session_type")
    if kind:
        return str(getattr(kind, "value", kind))
    for key, name in (("agent_id", "agent"), ("team_id", "team"), ("workflow_id", "workflow")):
        if record.get(key):
            return name
    return "agent"


def _agent_session(record: dict[str, Any], kind: str) -> AgentSession:
    if kind != "agent":
        raise InvalidInputError(
            f"a {kind}'s session is not ferrule's: its sessions are an agent's",
            field="session_type",
        )
    session = AgentSession.from_dict(deserialize_session_json_fields(dict(record)))
    if session is None:
        raise InvalidInputError("a session record needs its session_id", field="session_id")
    return session


def deserialize_session_by_type(record: dict[str, Any]) -> AgentSession:
    return _agent_session(record, detect_session_type(record))


def deserialize_session(session_type: SessionType | None, record: dict[str, Any]) -> AgentSession:
    """The session of ``record`` as ``session_type`` (None: the kind the record says)."""
    if session_type is None:
        return deserialize_session_by_type(record)
    return _agent_session(record, str(getattr(session_type, "value", session_type)))


def deserialize_sessions(
    session_type: SessionType | None, records: list[dict[str, Any]]
) -> list[AgentSession]:
    return [deserialize_session(session_type, r) for r in records]


async def resolve_session_type(
    db: BaseDb | AsyncBaseDb,
    session_id: str,
    session_type: SessionType | None,
    user_id: str | None = None,
) -> tuple[SessionType | None, Any]:
    """(the session's kind, its record): ``session_type`` as given (no record read), or the
    kind of the stored session (None, None when there is none)."""
    if session_type is not None:
        return session_type, None
    if isinstance(db, AsyncBaseDb):
        record = await db.get_session(session_id=session_id, user_id=user_id, deserialize=False)
    else:
        record = db.get_session(session_id=session_id, user_id=user_id, deserialize=False)
    if not record:
        return None, None
    return SessionType(detect_session_type(record if isinstance(record, dict) else {})), record


def get_sort_value(record: dict[str, Any], sort_by: str) -> Any:
    """The value to sort ``record`` by (``updated_at`` falling back to ``created_at``)."""
    value = record.get(sort_by)
    if value is None and sort_by == "updated_at":
        value = record.get("created_at")
    return value


def serialize_session_json_fields(session: dict[str, Any]) -> dict[str, Any]:
    """``session`` with its JSON fields as text."""
    out = dict(session)
    for key in JSON_FIELDS:
        if out.get(key) is not None:
            out[key] = json_serializer(out[key])
    return out


def deserialize_session_json_fields(session: dict[str, Any]) -> dict[str, Any]:
    """``session`` with its JSON fields read back from text."""
    out = dict(session)
    for key in JSON_FIELDS:
        if isinstance(out.get(key), str):
            out[key] = json.loads(out[key])
    return out


def db_from_dict(db_data: dict[str, Any]) -> BaseDb | None:
    """The db of a ``to_dict()`` dict (``type``: its class), or None for an unknown type."""
    from .in_memory import InMemoryDb
    from .postgres import PostgresDb
    from .sqlite import SqliteDb

    classes: dict[str, Any] = {"SqliteDb": SqliteDb, "PostgresDb": PostgresDb}
    kind = db_data.get("type")
    if kind == "InMemoryDb":
        return InMemoryDb()
    made = classes.get(str(kind))
    return None if made is None else made.from_dict(db_data)
