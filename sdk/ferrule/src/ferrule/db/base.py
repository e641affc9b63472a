"""Agno's ``agno.db.base``: `BaseDb` and `AsyncBaseDb`, what ``Agent(db=...)`` takes and what
a program reads sessions and memories through (``db.get_sessions()``,
``db.get_user_memories(user_id=...)``...); `SessionType`; and `StorageDb`, ferrule's own
protocol of a storage description.

A db describes a storage component (`StorageDb`: its component type and attributes): the
agent defines it on its runtime when first needed. Its own methods define it on the
process's shared runtime (once per db object) and call the storage contract
(`ferrule_kit.storage`): sessions are `ferrule.session.AgentSession`, memories
`ferrule.db.schemas.UserMemory`. Filters, sorting and pages the contract has no field for
(a session's name, a time range, ``sort_by``...) are applied to what it lists. `AsyncBaseDb`'s
methods are coroutines; the same store serves sync and async agents alike.

ferrule keeps no metrics table (a run's metrics are kept with the run) and no knowledge
table (a knowledge base's contents are its vector store's): their methods are refused.
"""

from __future__ import annotations

import enum
import time
import uuid
from typing import Any, ClassVar, Protocol, runtime_checkable

from ferrule_kernel import InvalidInputError

from ..session.agent import AgentSession
from .schemas.knowledge import KnowledgeRow
from .schemas.memory import UserMemory

__all__ = ["AsyncBaseDb", "BaseDb", "SessionType", "StorageDb"]

NO_METRICS = (
    "ferrule keeps each run's metrics with the run (RunOutput.metrics); there is no metrics table"
)
NO_KNOWLEDGE = (
    "ferrule's Knowledge keeps its contents in its vector store; there is no knowledge table"
)
NO_SQLALCHEMY = (
    "ferrule's stores are storage components, with no SQLAlchemy session: use the db's methods"
)
NO_V1 = "ferrule's stores migrate their own schema when they open; Agno 1.x tables are not read"


@runtime_checkable
class StorageDb(Protocol):
    """A storage component description: its component type (one implementing the contract
    of `ferrule_kit.storage`) and the attributes to define it with on ``runtime``."""

    component_type: str

    def attributes(self, runtime: Any) -> dict[str, Any]: ...


class SessionType(str, enum.Enum):
    """A session's kind: ferrule's are an agent's."""

    AGENT = "agent"
    TEAM = "team"
    WORKFLOW = "workflow"


def _refused(note: str, field: str) -> InvalidInputError:
    return InvalidInputError(note, field=field)


def _sorted_page(
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


class _Tables:
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
            raise _refused(NO_METRICS, "metrics_table")
        if knowledge_table is not None:
            raise _refused(NO_KNOWLEDGE, "knowledge_table")
        from ferrule_kit.sqlstore import TableNames

        # a name no store could make is refused here, naming it
        TableNames(sessions=session_table or "sessions", memories=memory_table or "memories")
        self.session_table_name = session_table
        self.memory_table_name = memory_table
        self.metrics_table_name = None
        self.knowledge_table_name = None
        self.id = id or str(uuid.uuid5(uuid.NAMESPACE_URL, repr(self.identity())))
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
        raise _refused(NO_SQLALCHEMY, "Session")

    @property
    def metadata(self) -> Any:
        raise _refused(NO_SQLALCHEMY, "metadata")

    @property
    def async_session_factory(self) -> Any:
        raise _refused(NO_SQLALCHEMY, "async_session_factory")

    def migrate_table_from_v1_to_v2(
        self, v1_db_schema: str, v1_table_name: str, v1_table_type: str
    ) -> None:
        raise _refused(NO_V1, "migrate_table_from_v1_to_v2")

    def _tables(self) -> set[str]:
        sessions = self.session_table_name or "sessions"
        runs = "runs" if sessions == "sessions" else f"{sessions}_runs"
        return {sessions, runs, self.memory_table_name or "memories"}


class _Records:
    """The conversions between the contract's records and Agno's."""

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
        from ferrule_kit.messages import converter
        from ferrule_kit.storage import Run, Session

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


class BaseDb(_Tables, _Records):
    """A store of sessions and memories, with Agno's methods (see the module docstring)."""

    component_type: ClassVar[str]
    session_table_name: str | None
    memory_table_name: str | None
    metrics_table_name: str | None
    knowledge_table_name: str | None
    id: str

    def __init__(
        self,
        session_table: str | None = None,
        memory_table: str | None = None,
        metrics_table: str | None = None,
        knowledge_table: str | None = None,
        id: str | None = None,
    ) -> None:
        self._init_tables(session_table, memory_table, metrics_table, knowledge_table, id)

    def attributes(self, runtime: Any) -> dict[str, Any]:
        """The storage component's attributes (a subclass says where its store is)."""
        raise NotImplementedError(f"{type(self).__name__} names no store")

    def close(self) -> None:
        """Let the store go (it opens again on the next call)."""
        self._release()

    def table_exists(self, table_name: str) -> bool:
        """Whether ``table_name`` is one of this store's tables (made when it opens)."""
        self._call("schema_version", {})
        return table_name in self._tables()

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": type(self).__name__, **self.table_attributes()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BaseDb:
        """The db of ``to_dict``'s dict (a subclass's own keywords too)."""
        keywords = {k: v for k, v in data.items() if k not in ("type", "id")}
        return cls(**keywords, id=data.get("id"))

    # -- sessions -----------------------------------------------------------------------

    def get_session(
        self,
        session_id: str,
        session_type: SessionType | None = None,
        user_id: str | None = None,
        deserialize: bool | None = True,
    ) -> AgentSession | dict[str, Any] | None:
        """One session with its runs, or None (also when it is another user's, or of
        another kind)."""
        record = self._call("get_session", {"session_id": session_id})["session"]
        if record is None or (user_id is not None and record.get("user_id") != user_id):
            return None
        if not self.sessions_matching([record], session_type, None, None, None):
            return None
        runs = self._call("get_runs", {"session_id": session_id})["runs"]
        session = self.session_of(record, runs)
        return session if deserialize else session.to_dict()

    def get_sessions(
        self,
        session_type: SessionType | None = None,
        user_id: str | None = None,
        component_id: str | None = None,
        session_name: str | None = None,
        start_timestamp: int | None = None,
        end_timestamp: int | None = None,
        limit: int | None = None,
        page: int | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        deserialize: bool | None = True,
    ) -> list[AgentSession] | tuple[list[dict[str, Any]], int]:
        """Sessions (of ``user_id``, of the agent ``component_id``, named like
        ``session_name``, created within the time range), sorted and paged; with
        ``deserialize=False`` their dicts and how many matched."""
        inputs: dict[str, Any] = {"limit": 10_000, "user_id": user_id, "agent_id": component_id}
        records = self._call("list_sessions", inputs)["sessions"]
        records = self.sessions_matching(
            records, session_type, session_name, start_timestamp, end_timestamp
        )
        total = len(records)
        records = _sorted_page(records, sort_by, sort_order, limit, page)
        sessions = [self.session_of(r, None) for r in records]
        if deserialize:
            return sessions
        return [s.to_dict() for s in sessions], total

    def upsert_session(
        self, session: AgentSession, deserialize: bool | None = True
    ) -> AgentSession | dict[str, Any] | None:
        """Store the session's fields (its runs are the agent's to store)."""
        self._call("upsert_session", self.session_inputs(session))
        return BaseDb.get_session(self, session.session_id, deserialize=deserialize)

    def upsert_sessions(
        self,
        sessions: list[AgentSession],
        deserialize: bool | None = True,
        preserve_updated_at: bool = False,
    ) -> list[AgentSession | dict[str, Any]]:
        stored = [BaseDb.upsert_session(self, s, deserialize) for s in sessions]
        return [s for s in stored if s is not None]

    def rename_session(
        self,
        session_id: str,
        session_type: SessionType,
        session_name: str,
        user_id: str | None = None,
        deserialize: bool | None = True,
    ) -> AgentSession | dict[str, Any] | None:
        if BaseDb.get_session(self, session_id, session_type, user_id) is None:
            return None
        self._call("rename_session", {"session_id": session_id, "name": session_name})
        return BaseDb.get_session(self, session_id, session_type, user_id, deserialize)

    def delete_session(self, session_id: str, user_id: str | None = None) -> bool:
        if user_id is not None and BaseDb.get_session(self, session_id, user_id=user_id) is None:
            return False
        return bool(self._call("delete_session", {"session_id": session_id})["deleted"])

    def delete_sessions(self, session_ids: list[str], user_id: str | None = None) -> None:
        for session_id in session_ids:
            BaseDb.delete_session(self, session_id, user_id)

    # -- memories -----------------------------------------------------------------------

    def get_user_memory(
        self, memory_id: str, deserialize: bool | None = True, user_id: str | None = None
    ) -> UserMemory | dict[str, Any] | None:
        record = self._call("get_memory", {"memory_id": memory_id, "user_id": user_id})["memory"]
        if record is None:
            return None
        memory = self.memory_of(record)
        return memory if deserialize else memory.to_dict()

    def get_user_memories(
        self,
        user_id: str | None = None,
        agent_id: str | None = None,
        team_id: str | None = None,
        topics: list[str] | None = None,
        search_content: str | None = None,
        limit: int | None = None,
        page: int | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        deserialize: bool | None = True,
    ) -> list[UserMemory] | tuple[list[dict[str, Any]], int]:
        """Memories (of ``user_id``, or every user's; of ``agent_id``; with any of
        ``topics``; holding ``search_content``), sorted (newest first by default) and paged;
        with ``deserialize=False`` their dicts and how many matched."""
        records = self.memories_matching(
            self._memory_records(user_id, topics), agent_id, team_id, search_content
        )
        total = len(records)
        memories = [
            self.memory_of(r) for r in _sorted_page(records, sort_by, sort_order, limit, page)
        ]
        return memories if deserialize else ([m.to_dict() for m in memories], total)

    def get_all_memory_topics(self, user_id: str | None = None) -> list[str]:
        topics = {t for r in self._memory_records(user_id) for t in r.get("topics") or ()}
        return sorted(topics)

    def get_user_memory_stats(
        self, limit: int | None = None, page: int | None = None, user_id: str | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Per user: how many memories, and when the last changed (newest first)."""
        rows = self.stats(self._memory_records(user_id))
        total = len(rows)
        if limit is not None:
            start = ((page or 1) - 1) * limit
            rows = rows[start : start + limit]
        return rows, total

    def upsert_user_memory(
        self, memory: UserMemory, deserialize: bool | None = True
    ) -> UserMemory | dict[str, Any] | None:
        record = self._call("upsert_memory", self.memory_inputs(memory))["memory"]
        stored = self.memory_of(record)
        memory.memory_id = stored.memory_id
        return stored if deserialize else stored.to_dict()

    def upsert_memories(
        self,
        memories: list[UserMemory],
        deserialize: bool | None = True,
        preserve_updated_at: bool = False,
    ) -> list[UserMemory | dict[str, Any]]:
        stored = [BaseDb.upsert_user_memory(self, m, deserialize) for m in memories]
        return [m for m in stored if m is not None]

    def delete_user_memory(self, memory_id: str, user_id: str | None = None) -> None:
        self._call("delete_memory", {"memory_id": memory_id, "user_id": user_id})

    def delete_user_memories(self, memory_ids: list[str], user_id: str | None = None) -> None:
        for memory_id in memory_ids:
            BaseDb.delete_user_memory(self, memory_id, user_id)

    def clear_memories(self) -> None:
        """Delete every user's memories."""
        self._call("clear_memories", {})

    # -- refused: no metrics or knowledge table -----------------------------------------

    def get_metrics(
        self, starting_date: Any = None, ending_date: Any = None
    ) -> tuple[list[dict[str, Any]], int | None]:
        raise _refused(NO_METRICS, "metrics")

    def calculate_metrics(self) -> Any:
        raise _refused(NO_METRICS, "metrics")

    def get_knowledge_content(self, id: str) -> KnowledgeRow | None:
        raise _refused(NO_KNOWLEDGE, "knowledge")

    def get_knowledge_contents(
        self,
        limit: int | None = None,
        page: int | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        linked_to: str | None = None,
    ) -> tuple[list[KnowledgeRow], int]:
        raise _refused(NO_KNOWLEDGE, "knowledge")

    def upsert_knowledge_content(self, knowledge_row: KnowledgeRow) -> None:
        raise _refused(NO_KNOWLEDGE, "knowledge")

    def delete_knowledge_content(self, id: str) -> None:
        raise _refused(NO_KNOWLEDGE, "knowledge")


class AsyncBaseDb(_Tables, _Records):
    """`BaseDb` with coroutine methods (see the module docstring)."""

    component_type: ClassVar[str]
    session_table_name: str | None
    memory_table_name: str | None
    metrics_table_name: str | None
    knowledge_table_name: str | None
    id: str

    def __init__(
        self,
        id: str | None = None,
        session_table: str | None = None,
        memory_table: str | None = None,
        metrics_table: str | None = None,
        knowledge_table: str | None = None,
    ) -> None:
        self._init_tables(session_table, memory_table, metrics_table, knowledge_table, id)

    def attributes(self, runtime: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} names no store")

    async def _run(self, method: str, *args: Any) -> Any:
        """`BaseDb`'s ``method`` on this store, in a worker thread."""
        import asyncio

        return await asyncio.to_thread(getattr(BaseDb, method), self, *args)

    async def close(self) -> None:
        await self._run("close")

    async def table_exists(self, table_name: str) -> bool:
        result: bool = await self._run("table_exists", table_name)
        return result

    async def get_session(
        self,
        session_id: str,
        session_type: SessionType | None = None,
        user_id: str | None = None,
        deserialize: bool | None = True,
    ) -> AgentSession | dict[str, Any] | None:
        return await self._run("get_session", session_id, session_type, user_id, deserialize)  # type: ignore[no-any-return]

    async def get_sessions(
        self,
        session_type: SessionType | None = None,
        user_id: str | None = None,
        component_id: str | None = None,
        session_name: str | None = None,
        start_timestamp: int | None = None,
        end_timestamp: int | None = None,
        limit: int | None = None,
        page: int | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        deserialize: bool | None = True,
    ) -> list[AgentSession] | tuple[list[dict[str, Any]], int]:
        return await self._run(  # type: ignore[no-any-return]
            "get_sessions",
            session_type,
            user_id,
            component_id,
            session_name,
            start_timestamp,
            end_timestamp,
            limit,
            page,
            sort_by,
            sort_order,
            deserialize,
        )

    async def upsert_session(
        self, session: AgentSession, deserialize: bool | None = True
    ) -> AgentSession | dict[str, Any] | None:
        return await self._run("upsert_session", session, deserialize)  # type: ignore[no-any-return]

    async def rename_session(
        self,
        session_id: str,
        session_type: SessionType,
        session_name: str,
        user_id: str | None = None,
        deserialize: bool | None = True,
    ) -> AgentSession | dict[str, Any] | None:
        return await self._run(  # type: ignore[no-any-return]
            "rename_session", session_id, session_type, session_name, user_id, deserialize
        )

    async def upsert_sessions(
        self,
        sessions: list[AgentSession],
        deserialize: bool | None = True,
        preserve_updated_at: bool = False,
    ) -> list[AgentSession | dict[str, Any]]:
        return await self._run("upsert_sessions", sessions, deserialize, preserve_updated_at)  # type: ignore[no-any-return]

    async def delete_session(self, session_id: str, user_id: str | None = None) -> bool:
        return bool(await self._run("delete_session", session_id, user_id))

    async def delete_sessions(self, session_ids: list[str], user_id: str | None = None) -> None:
        await self._run("delete_sessions", session_ids, user_id)

    async def get_user_memory(
        self, memory_id: str, deserialize: bool | None = True, user_id: str | None = None
    ) -> UserMemory | dict[str, Any] | None:
        return await self._run("get_user_memory", memory_id, deserialize, user_id)  # type: ignore[no-any-return]

    async def get_user_memories(
        self,
        user_id: str | None = None,
        agent_id: str | None = None,
        team_id: str | None = None,
        topics: list[str] | None = None,
        search_content: str | None = None,
        limit: int | None = None,
        page: int | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        deserialize: bool | None = True,
    ) -> list[UserMemory] | tuple[list[dict[str, Any]], int]:
        return await self._run(  # type: ignore[no-any-return]
            "get_user_memories",
            user_id,
            agent_id,
            team_id,
            topics,
            search_content,
            limit,
            page,
            sort_by,
            sort_order,
            deserialize,
        )

    async def get_all_memory_topics(self, user_id: str | None = None) -> list[str]:
        return await self._run("get_all_memory_topics", user_id)  # type: ignore[no-any-return]

    async def get_user_memory_stats(
        self, limit: int | None = None, page: int | None = None, user_id: str | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        return await self._run("get_user_memory_stats", limit, page, user_id)  # type: ignore[no-any-return]

    async def upsert_user_memory(
        self, memory: UserMemory, deserialize: bool | None = True
    ) -> UserMemory | dict[str, Any] | None:
        return await self._run("upsert_user_memory", memory, deserialize)  # type: ignore[no-any-return]

    async def upsert_memories(
        self,
        memories: list[UserMemory],
        deserialize: bool | None = True,
        preserve_updated_at: bool = False,
    ) -> list[UserMemory | dict[str, Any]]:
        return await self._run("upsert_memories", memories, deserialize, preserve_updated_at)  # type: ignore[no-any-return]

    async def delete_user_memory(self, memory_id: str, user_id: str | None = None) -> None:
        await self._run("delete_user_memory", memory_id, user_id)

    async def delete_user_memories(self, memory_ids: list[str], user_id: str | None = None) -> None:
        await self._run("delete_user_memories", memory_ids, user_id)

    async def clear_memories(self) -> None:
        await self._run("clear_memories")

    async def get_metrics(
        self, starting_date: Any = None, ending_date: Any = None
    ) -> tuple[list[dict[str, Any]], int | None]:
        raise _refused(NO_METRICS, "metrics")

    async def calculate_metrics(self) -> Any:
        raise _refused(NO_METRICS, "metrics")

    async def get_knowledge_content(self, id: str) -> KnowledgeRow | None:
        raise _refused(NO_KNOWLEDGE, "knowledge")

    async def get_knowledge_contents(
        self,
        limit: int | None = None,
        page: int | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        linked_to: str | None = None,
    ) -> tuple[list[KnowledgeRow], int]:
        raise _refused(NO_KNOWLEDGE, "knowledge")

    async def upsert_knowledge_content(self, knowledge_row: KnowledgeRow) -> None:
        raise _refused(NO_KNOWLEDGE, "knowledge")

    async def delete_knowledge_content(self, id: str) -> None:
        raise _refused(NO_KNOWLEDGE, "knowledge")
