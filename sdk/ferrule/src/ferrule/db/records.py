"""What `ferrule.db.base`'s `BaseDb` and `AsyncBaseDb` share: the tables a db names and the
storage component it defines on the process's shared runtime (`Tables`), the translation
between the storage contract's records and Agno's sessions and memories, with the filters,
sorting and pages the contract has no field for (`Records`), `SessionType`, and `StorageDb`,
ferrule's own protocol of a storage description."""

from __future__ import annotations

import enum
import time
import uuid
from typing import Any, Protocol, runtime_checkable

import attrs
from ferrule_kernel import InvalidInputError

from ..session.agent import AgentSession
from .schemas.knowledge import KnowledgeRow
from .schemas.memory import UserMemory

__all__ = [
    "NO_METRICS",
    "NO_SQLALCHEMY",
    "Records",
    "SessionType",
    "StorageDb",
    "Tables",
    "refused",
    "sorted_page",
]

NO_METRICS = (
    "ferrule keeps each run's metrics with the run (RunOutput.metrics); there is no metrics table"
)
NO_SQLALCHEMY = (
    "ferrule's stores are storage components, with no SQLAlchemy session: use the db's methods"
)
NO_V1 = "ferrule's stores migrate their own schema when they open; Agno 1.x tables are not read"


@runtime_checkable
class StorageDb(Protocol):
    """A storage component description: its component type (one implementing the contract
    of `ferrule_kit.stores.storage`) and the attributes to define it with on ``runtime``."""

    component_type: str

    def attributes(self, runtime: Any) -> dict[str, Any]: ...


class SessionType(str, enum.Enum):
    """A session's kind: ferrule's are an agent's."""

    AGENT = "agent"
    TEAM = "team"
    WORKFLOW = "workflow"


def refused(note: str, field: str) -> InvalidInputError:
    return InvalidInputError(note, field=field)


def sorted_page(
    records: list[dict[str, Any]],
    sort_by: str | None,
    sort_order: str | None,
    limit: int | None,
    page: int | None,
) -> list[dict[str, Any]]:
    key = sort_by or "created_at"
    descending = (sort_order or "desc").lower() != "asc"
    records = sorted(
        records, key=lambda r: (r.get(key) is None, r.get(key) or 0), reverse=descending
    )
    if limit is not None:
        start = ((page or 1) - 1) * limit
        records = records[start : start + limit]
    return records


class Tables:
    """The table names a db was given (Agno's ``session_table``...)."""

    session_table_name: str | None
    memory_table_name: str | None
    metrics_table_name: str | None
    knowledge_table_name: str | None
    id: str

    def _init_tables(
        self,
        session_table: str | None,
        memory_table: str | None,
        metrics_table: str | None,
        knowledge_table: str | None,
        id: str | None,
    ) -> None:
        if metrics_table is not None:
            raise refused(NO_METRICS, "metrics_table")
        from ferrule_kit.stores.sql.store import TableNames

        # a name no store could make is refused here, naming it
        TableNames(
            sessions=session_table or "sessions",
            memories=memory_table or "memories",
            knowledge=knowledge_table or "knowledge",
        )
        self.session_table_name = session_table
        self.memory_table_name = memory_table
        self.metrics_table_name = None
        self.knowledge_table_name = knowledge_table
        identity = self.identity()
        if knowledge_table is not None:  # ids of dbs made before knowledge tables unchanged
            identity = (identity, knowledge_table)
        self.id = id or str(uuid.uuid5(uuid.NAMESPACE_URL, repr(identity)))
        self._component: str | None = None

    def identity(self) -> Any:
        return (type(self).__name__, self.session_table_name, self.memory_table_name)

    def table_attributes(self) -> dict[str, Any]:
        """The storage component's table names (none: its defaults)."""
        out: dict[str, Any] = {}
        if self.session_table_name is not None:
            out["session_table"] = self.session_table_name
        if self.memory_table_name is not None:
            out["memory_table"] = self.memory_table_name
        if self.knowledge_table_name is not None:
            out["knowledge_table"] = self.knowledge_table_name
        return out

    def _call(self, method: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """One contract method of the store, defined on the shared runtime when first used."""
        from ..shared_runtime import default_runtime

        runtime = default_runtime()
        if self._component is None:
            name = f"db-{uuid.uuid4().hex[:12]}"
            runtime.define(self.component_type, name, self.attributes(runtime))  # type: ignore[attr-defined]
            self._component = name
        result: dict[str, Any] = runtime.call_method(self._component, method, inputs)
        return result

    def _memory_records(
        self, user_id: str | None, topics: list[str] | None = None
    ) -> list[dict[str, Any]]:
        inputs: dict[str, Any] = {"user_id": user_id}
        if topics:
            inputs["topics"] = topics
        records: list[dict[str, Any]] = self._call("list_memories", inputs)["memories"]
        return records

    def _release(self) -> None:
        from ..shared_runtime import default_runtime

        if self._component is not None:
            default_runtime().delete(self._component)
            self._component = None

    @property
    def Session(self) -> Any:
        raise refused(NO_SQLALCHEMY, "Session")

    @property
    def metadata(self) -> Any:
        raise refused(NO_SQLALCHEMY, "metadata")

    @property
    def async_session_factory(self) -> Any:
        raise refused(NO_SQLALCHEMY, "async_session_factory")

    def migrate_table_from_v1_to_v2(
        self, v1_db_schema: str, v1_table_name: str, v1_table_type: str
    ) -> None:
        raise refused(NO_V1, "migrate_table_from_v1_to_v2")

    def _tables(self) -> set[str]:
        sessions = self.session_table_name or "sessions"
        runs = "runs" if sessions == "sessions" else f"{sessions}_runs"
        knowledge = self.knowledge_table_name or "knowledge"
        return {sessions, runs, self.memory_table_name or "memories", knowledge}


class Records:
    """The conversions between the contract's records and Agno's."""

    @staticmethod
    def knowledge_inputs(row: KnowledgeRow) -> dict[str, Any]:
        content = {f.name: getattr(row, f.name) for f in attrs.fields(KnowledgeRow)}
        content["status"] = getattr(row.status, "value", row.status)  # a ContentStatus too
        return content

    @staticmethod
    def knowledge_row_of(record: dict[str, Any]) -> KnowledgeRow:
        fields = {f.name for f in attrs.fields(KnowledgeRow)}
        row = {k: v for k, v in record.items() if k in fields}
        return KnowledgeRow(
            **{**row, "name": row.get("name") or "", "description": row.get("description") or ""}
        )

    @staticmethod
    def knowledge_list_inputs(
        limit: int | None,
        page: int | None,
        sort_by: str | None,
        sort_order: str | None,
        linked_to: str | None,
    ) -> dict[str, Any]:
        inputs: dict[str, Any] = {"limit": limit, "page": page, "linked_to": linked_to}
        if sort_by is not None:
            # as Agno's tables: ascending when asked, else descending
            inputs["sort_by"] = sort_by
            inputs["sort_order"] = "asc" if (sort_order or "").lower() == "asc" else "desc"
        return inputs

    @staticmethod
    def session_inputs(session: AgentSession) -> dict[str, Any]:
        data = session.session_data or {}
        inputs: dict[str, Any] = {
            "session_id": session.session_id,
            "user_id": session.user_id,
            "agent_id": session.agent_id,
            "name": data.get("session_name"),
            "session_state": dict(data.get("session_state") or {}),
            "metadata": dict(session.metadata or {}),
        }
        if session.summary is not None:
            inputs["summary"] = {
                "summary": session.summary.summary,
                "topics": list(session.summary.topics or []),
                "updated_at": time.time(),
            }
        return inputs

    @staticmethod
    def memory_inputs(memory: UserMemory) -> dict[str, Any]:
        if memory.user_id is None:
            raise InvalidInputError("a stored memory needs its user_id", field="user_id")
        return {
            "user_id": memory.user_id,
            "memory": memory.memory,
            "topics": list(memory.topics or []),
            "memory_id": memory.memory_id,
            "agent_id": memory.agent_id,
        }

    @staticmethod
    def memory_of(record: dict[str, Any]) -> UserMemory:
        return UserMemory(
            memory=record["memory"],
            memory_id=record["memory_id"],
            topics=list(record.get("topics") or []),
            user_id=record["user_id"],
            agent_id=record.get("agent_id"),
            created_at=record.get("created_at") or None,
            updated_at=record.get("updated_at") or None,
        )

    @staticmethod
    def session_of(record: dict[str, Any], runs: list[dict[str, Any]] | None) -> AgentSession:
        from ferrule_kit.content.messages import converter
        from ferrule_kit.stores.storage import Run, Session

        session = converter.structure(record, Session)
        kit_runs = [converter.structure(r, Run) for r in runs] if runs is not None else None
        return AgentSession.from_kit(session, kit_runs)

    @staticmethod
    def memories_matching(
        records: list[dict[str, Any]],
        agent_id: str | None,
        team_id: str | None,
        search_content: str | None,
    ) -> list[dict[str, Any]]:
        if team_id is not None:
            return []  # ferrule's memories are an agent's, never a team's
        out = [r for r in records if agent_id is None or r.get("agent_id") == agent_id]
        if search_content:
            needle = search_content.lower()
            out = [r for r in out if needle in r["memory"].lower()]
        return out

    @staticmethod
    def sessions_matching(
        records: list[dict[str, Any]],
        session_type: Any,
        session_name: str | None,
        start_timestamp: int | None,
        end_timestamp: int | None,
    ) -> list[dict[str, Any]]:
        kind = getattr(session_type, "value", session_type)
        if kind not in (None, "agent"):
            return []
        out = records
        if session_name:
            out = [r for r in out if session_name.lower() in (r.get("name") or "").lower()]
        if start_timestamp is not None:
            out = [r for r in out if r["created_at"] >= start_timestamp]
        if end_timestamp is not None:
            out = [r for r in out if r["created_at"] <= end_timestamp]
        return out

    @staticmethod
    def stats(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        by_user: dict[str, dict[str, Any]] = {}
        for record in records:
            row = by_user.setdefault(
                record["user_id"],
                {"user_id": record["user_id"], "total_memories": 0, "last_memory_updated_at": 0},
            )
            row["total_memories"] += 1
            row["last_memory_updated_at"] = max(
                row["last_memory_updated_at"], int(record.get("updated_at") or 0)
            )
        return sorted(by_user.values(), key=lambda r: -r["last_memory_updated_at"])
