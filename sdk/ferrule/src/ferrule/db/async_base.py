"""Agno's ``AsyncBaseDb`` (exported by `ferrule.db.base`): `BaseDb` with coroutine methods,
each running `BaseDb`'s in a worker thread on the same store."""

from __future__ import annotations

from typing import Any, ClassVar

from ..session.agent import AgentSession
from .records import NO_METRICS, Records, SessionType, Tables, refused
from .schemas.knowledge import KnowledgeRow
from .schemas.memory import UserMemory

__all__ = ["AsyncBaseDb"]


class AsyncBaseDb(Tables, Records):
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

    async def _run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """`BaseDb`'s ``method`` on this store, in a worker thread."""
        import asyncio

        from .base import BaseDb

        return await asyncio.to_thread(getattr(BaseDb, method), self, *args, **kwargs)

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
        return await self._run(  # type: ignore[no-any-return]
            "get_sessions",
            session_type,
            user_id=user_id,
            component_id=component_id,
            session_name=session_name,
            start_timestamp=start_timestamp,
            end_timestamp=end_timestamp,
            limit=limit,
            page=page,
            sort_by=sort_by,
            sort_order=sort_order,
            deserialize=deserialize,
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
        return await self._run(  # type: ignore[no-any-return]
            "get_user_memories",
            user_id,
            agent_id=agent_id,
            team_id=team_id,
            topics=topics,
            search_content=search_content,
            limit=limit,
            page=page,
            sort_by=sort_by,
            sort_order=sort_order,
            deserialize=deserialize,
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
        raise refused(NO_METRICS, "metrics")

    async def calculate_metrics(self) -> Any:
        raise refused(NO_METRICS, "metrics")

    async def get_knowledge_content(self, id: str) -> KnowledgeRow | None:
        found: KnowledgeRow | None = await self._run("get_knowledge_content", id)
        return found

    async def get_knowledge_contents(
        self,
        limit: int | None = None,
        page: int | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        linked_to: str | None = None,
    ) -> tuple[list[KnowledgeRow], int]:
        found: tuple[list[KnowledgeRow], int] = await self._run(
            "get_knowledge_contents", limit, page, sort_by, sort_order, linked_to
        )
        return found

    async def upsert_knowledge_content(self, knowledge_row: KnowledgeRow) -> KnowledgeRow | None:
        found: KnowledgeRow | None = await self._run("upsert_knowledge_content", knowledge_row)
        return found

    async def delete_knowledge_content(self, id: str) -> None:
        await self._run("delete_knowledge_content", id)
