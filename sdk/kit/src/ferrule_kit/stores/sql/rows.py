"""SQL rows of the storage contract: the columns a SQL store keeps and the records read back.

A SQL store keeps JSON as text (`dump_json`), a run's messages apart from the rest of it
(so history loads read only those), and selects its columns in the orders below, which
`session_record`, `run_record` and `memory_record` turn back into the contract's wire
dicts. `MessageWindow` picks `get_messages`' window from runs read newest first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from ferrule_kit.content.messages import converter
from ferrule_kit.stores.storage import Run, SessionSummary

__all__ = [
    "MEMORY_COLUMNS",
    "RUN_COLUMNS",
    "RUN_SELECT",
    "SESSION_COLUMNS",
    "MessageWindow",
    "dump_json",
    "has_any_topic",
    "load_json",
    "memory_record",
    "run_payload",
    "run_record",
    "session_record",
    "summary_json",
]


def dump_json(value: Any, field: str) -> str:
    """``value`` as JSON text for a store, or `InvalidInputError` at ``field``.

    Stores keep JSON as text, not as a JSON column type: text gives back exactly what was
    written (Postgres' jsonb reorders keys, turns -0.0 into 0 and refuses ``\\u0000``), on
    every backend alike. ASCII escapes keep any string storable.
    """
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"not storable as JSON: {exc}", field=field) from None


def load_json(text: str) -> Any:
    return json.loads(text)


#: The columns a backend selects, in this order, for `session_record`.
SESSION_COLUMNS = (
    "session_id",
    "user_id",
    "agent_id",
    "name",
    "session_state",
    "summary",
    "metadata",
    "run_count",
    "created_at",
    "updated_at",
    "state_version",
)
#: The fields of a run a backend keeps in columns of their own; `run_payload` holds the
#: rest as JSON, apart from the messages (so that history loads read only those).
RUN_COLUMNS = ("run_id", "session_id", "user_id", "agent_id", "status", "created_at", "updated_at")
#: The columns a backend selects, in this order, for `run_record`.
RUN_SELECT = (*RUN_COLUMNS, "payload", "messages")
_RUN_FIELDS = tuple(field.name for field in attrs.fields(Run))
#: The columns a backend selects, in this order, for `memory_record`.
MEMORY_COLUMNS = (
    "memory_id",
    "user_id",
    "memory",
    "topics",
    "agent_id",
    "created_at",
    "updated_at",
)


def session_record(row: Sequence[Any]) -> dict[str, Any]:
    """A stored session (its `SESSION_COLUMNS`) as the wire dict of a `Session`."""
    record = dict(zip(SESSION_COLUMNS, row, strict=True))
    for column in ("session_state", "metadata"):
        record[column] = load_json(record[column])
    if record["summary"] is not None:
        record["summary"] = load_json(record["summary"])
    return record


def summary_json(summary: SessionSummary | None) -> str | None:
    return None if summary is None else dump_json(converter.unstructure(summary), "$.summary")


def run_payload(run: Run) -> tuple[str, str]:
    """A run's JSON for a store: (everything but its columns and messages, the messages)."""
    data = converter.unstructure(run)
    messages = data.pop("messages")
    for column in RUN_COLUMNS:
        del data[column]
    return dump_json(data, "$.run"), dump_json(messages, "$.run.messages")


def run_record(row: Sequence[Any]) -> dict[str, Any]:
    """A stored run (its `RUN_SELECT` columns) as the wire dict of a `Run`, its keys in
    the class's order (as the converter would give them)."""
    record = dict(zip(RUN_COLUMNS, row, strict=False))
    record.update(load_json(row[-2]))
    record["messages"] = load_json(row[-1])
    return {name: record[name] for name in _RUN_FIELDS}


def memory_record(row: Sequence[Any]) -> dict[str, Any]:
    """A stored memory (its `MEMORY_COLUMNS`) as the wire dict of a `UserMemory`."""
    record = dict(zip(MEMORY_COLUMNS, row, strict=True))
    record["topics"] = load_json(record["topics"])
    return record


def has_any_topic(record: dict[str, Any], topics: list[str] | None) -> bool:
    return topics is None or not set(topics).isdisjoint(record["topics"])


@attrs.define
class MessageWindow:
    """Picks `get_messages`' window from runs read newest first: `add` each run's
    messages until it returns True (enough read), then take `messages`."""

    skip_roles: frozenset[str]
    limit: int | None
    _runs: list[list[dict[str, Any]]] = attrs.field(factory=list)
    _count: int = 0

    def add(self, messages: list[dict[str, Any]]) -> bool:
        kept = [m for m in messages if m["role"] not in self.skip_roles]
        self._runs.append(kept)
        self._count += len(kept)
        return self.limit is not None and self._count >= self.limit

    def messages(self) -> list[dict[str, Any]]:
        out = [m for kept in reversed(self._runs) for m in kept]
        if self.limit is None or len(out) <= self.limit:
            return out
        out = out[-self.limit :]
        # Tool results whose assistant call was cut off would be refused by providers.
        start = 0
        while start < len(out) and out[start]["role"] == "tool":
            start += 1
        return out[start:]
