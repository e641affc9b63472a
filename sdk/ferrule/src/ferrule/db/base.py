"""Agno's ``agno.db.base``: `BaseDb` and `AsyncBaseDb`, what ``Agent(db=...)`` takes and what
a program reads sessions and memories through (``db.get_sessions()``,
``db.get_user_memories(user_id=...)``...); `SessionType`; and `StorageDb`, ferrule's own
protocol of a storage description.

A db describes a storage component (`StorageDb`: its component type and attributes): the
agent defines it on its runtime when first needed. Its own methods define it on the
process's shared runtime (once per db object) and call the storage contract
(`ferrule_kit.stores.storage`): sessions are `ferrule.session.AgentSession`, memories
`ferrule.db.schemas.UserMemory`. Filters, sorting and pages the contract has no field for
(a session's name, a time range, ``sort_by``...) are applied to what it lists. `AsyncBaseDb`'s
methods are coroutines; the same store serves sync and async agents alike.

ferrule keeps no metrics table (a run's metrics are kept with the run): its methods are
refused. A knowledge base's contents (`ferrule.knowledge.Knowledge`'s ``contents_db``) are
rows of the store's knowledge table (``knowledge_table``, default ``knowledge``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..session.agent import AgentSession
from .async_base import AsyncBaseDb
from .records import (
    NO_METRICS,
    Records,
    SessionType,
    StorageDb,
    Tables,
    refused,
    sorted_page,
)
from .schemas.knowledge import KnowledgeRow
from .schemas.memory import UserMemory

__all__ = ["AsyncBaseDb", "BaseDb", "SessionType", "StorageDb"]


class BaseDb(Tables, Records):
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
        *,
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
        records = sorted_page(records, sort_by, sort_order, limit, page)
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
        *,
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
            self.memory_of(r) for r in sorted_page(records, sort_by, sort_order, limit, page)
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

    # -- refused: no metrics table -------------------------------------------------------

    def get_metrics(
        self, starting_date: Any = None, ending_date: Any = None
    ) -> tuple[list[dict[str, Any]], int | None]:
        raise refused(NO_METRICS, "metrics")

    def calculate_metrics(self) -> Any:
        raise refused(NO_METRICS, "metrics")

    # -- knowledge contents --------------------------------------------------------------

    def get_knowledge_content(self, id: str) -> KnowledgeRow | None:
        """One content of a knowledge base (`ferrule.knowledge.Knowledge`'s contents_db)."""
        record = self._call("get_knowledge", {"id": id})["content"]
        return None if record is None else self.knowledge_row_of(record)

    def get_knowledge_contents(
        self,
        limit: int | None = None,
        page: int | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        linked_to: str | None = None,
    ) -> tuple[list[KnowledgeRow], int]:
        """Knowledge contents (of the knowledge base named ``linked_to``), sorted and paged,
        and how many there are over all pages."""
        inputs = self.knowledge_list_inputs(limit, page, sort_by, sort_order, linked_to)
        out = self._call("list_knowledge", inputs)
        return [self.knowledge_row_of(r) for r in out["contents"]], out["total"]

    def upsert_knowledge_content(self, knowledge_row: KnowledgeRow) -> KnowledgeRow | None:
        """Add a content, or change a stored one's fields that are not None; the row."""
        content = self.knowledge_inputs(knowledge_row)
        record = self._call("upsert_knowledge", {"content": content})["content"]
        return None if record is None else self.knowledge_row_of(record)

    def delete_knowledge_content(self, id: str) -> None:
        self._call("delete_knowledge", {"id": id})
