"""Agno's ``agno.memory.manager``: `MemoryManager`, a user's memories kept by a model's calls,
with Agno's constructor and methods; memories are Agno's `UserMemory`
(`ferrule.db.schemas`).

It is the agent's memory manager (`ferrule.agent.memory.MemoryManager`: what an agent with
``enable_user_memories`` runs after each run), so ``Agent(memory_manager=MemoryManager(...))``
takes it. Used on its own it needs ``db``: ``add_user_memory``, ``get_user_memories``,
``search_user_memories`` (the ``last_n``, the ``first_n``, or those the model finds
``agentic``-ally relevant to a query), ``replace_user_memory``, ``delete_user_memory``,
``clear_user_memories`` and ``clear`` act on it directly; ``create_user_memories`` and
``update_memory_task`` let ``model`` change them from what the user said (or an instruction);
``optimize_memories`` makes them fewer (`ferrule.memory.strategies`). ``system_message``
replaces the memory model's instructions; ``memory_capture_instructions`` say what is worth
remembering; ``additional_instructions`` are appended.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError

from ..agent.memory import MEMORY_INSTRUCTIONS, TOOL_GUIDANCE
from ..agent.memory import MemoryManager as AgentMemoryManager
from ..db.schemas.memory import UserMemory
from ..models.base import Model
from ..models.message import Message
from ..tools.function import Function
from .strategies import (
    MemoryOptimizationStrategy,
    MemoryOptimizationStrategyFactory,
    MemoryOptimizationStrategyType,
)

__all__ = ["MemoryManager", "MemorySearchResponse", "UserMemory"]


@attrs.define(kw_only=True)
class MemorySearchResponse:
    """What the model answers to an agentic search: the ids of the relevant memories."""

    memory_ids: list[str]


def _agno(memory: Any) -> UserMemory:
    return memory if isinstance(memory, UserMemory) else UserMemory.from_kit(memory)


class MemoryManager(AgentMemoryManager):
    """A user's memories with a model (see the module docstring)."""

    def __init__(
        self,
        model: Any = None,
        *,
        system_message: str | None = None,
        memory_capture_instructions: str | None = None,
        additional_instructions: str | None = None,
        db: Any = None,
        delete_memories: bool = False,
        update_memories: bool = True,
        add_memories: bool = True,
        clear_memories: bool = False,
        debug_mode: bool = False,
        id: str | None = None,
        name: str | None = None,
        owner_id: str | None = None,
        owner_type: str | None = None,
        tool_call_limit: int = 10,
        runtime: Any = None,
    ) -> None:
        instructions = system_message
        if instructions is None and memory_capture_instructions:
            instructions = f"{MEMORY_INSTRUCTIONS}\n\nWhat is worth remembering:\n{memory_capture_instructions}"
        super().__init__(
            model,
            db=db,
            instructions=instructions,
            additional_instructions=additional_instructions,
            tool_call_limit=tool_call_limit,
            runtime=runtime,
            add_memories=add_memories,
            update_memories=update_memories,
            delete_memories=delete_memories,
            clear_memories=clear_memories,
        )
        self.system_message = system_message
        self.memory_capture_instructions = memory_capture_instructions
        self.additional_instructions = additional_instructions
        self.debug_mode = debug_mode
        self.id, self.name, self.owner_id, self.owner_type = id, name, owner_id, owner_type
        #: Each user's memories as last read (`read_from_db`).
        self.memories: dict[str, list[UserMemory]] = {}

    # -- the store ----------------------------------------------------------------------

    def add_user_memory(self, memory: Any, user_id: str | None = None) -> str | None:  # type: ignore[override]
        if isinstance(memory, UserMemory):
            memory_id = super().add_user_memory(
                memory.memory, user_id or memory.user_id, memory.topics
            )
            return memory_id
        return super().add_user_memory(memory, user_id)

    def get_user_memories(self, user_id: str | None = None) -> list[UserMemory] | None:  # type: ignore[override]
        return [_agno(m) for m in super().get_user_memories(user_id)]

    async def aget_user_memories(self, user_id: str | None = None) -> list[UserMemory] | None:  # type: ignore[override]
        return [_agno(m) for m in await super().aget_user_memories(user_id)]

    def get_user_memory(self, memory_id: str, user_id: str | None = None) -> UserMemory | None:  # type: ignore[override]
        found = super().get_user_memory(memory_id, user_id)
        return None if found is None else _agno(found)

    def replace_user_memory(  # type: ignore[override]
        self, memory_id: str, memory: Any, user_id: str | None = None
    ) -> str | None:
        text = memory.memory if isinstance(memory, UserMemory) else memory
        return super().replace_user_memory(memory_id, text, user_id)

    def clear(self) -> None:
        """Forget every user's memories (the db's ``clear_memories``)."""
        if self.db is None:
            raise InvalidInputError("a MemoryManager's memories are in its db=", field="db")
        self.db.clear_memories()
        self.memories.clear()

    def read_from_db(self, user_id: str | None = None) -> None:
        """Read ``user_id``'s memories into `memories`."""
        self.memories[user_id or "default"] = self.get_user_memories(user_id) or []

    async def aread_from_db(self, user_id: str | None = None) -> None:
        self.memories[user_id or "default"] = await self.aget_user_memories(user_id) or []

    def initialize(self, user_id: str | None = None) -> None:
        """Make ready: the user's memories read."""
        self.set_log_level()
        self.read_from_db(user_id)

    def set_log_level(self) -> None:
        """With ``debug_mode``, ferrule's log at debug level (the program asked for it)."""
        if self.debug_mode:
            logging.getLogger("ferrule").setLevel(logging.DEBUG)

    def get_model(self) -> Model:
        if not isinstance(self.model, Model):
            raise InvalidInputError(
                "this MemoryManager has no Agno model= (OpenAIChat...)", field="model"
            )
        return self.model

    def determine_tools_for_model(
        self, tools: list[Any]
    ) -> list[Function[..., Any] | dict[str, Any]]:
        """The tools the memory model is given, as given."""
        return list(tools)

    def get_system_message(
        self,
        existing_memories: list[UserMemory] | None = None,
        enable_delete_memory: bool = True,
        enable_clear_memory: bool = True,
        enable_update_memory: bool = True,
        enable_add_memory: bool = True,
    ) -> Message:
        """The memory model's instructions, with the tools it is given (those enabled) and
        the memories it starts from."""
        enabled = {
            "add_memory": enable_add_memory,
            "update_memory": enable_update_memory,
            "delete_memory": enable_delete_memory,
            "clear_memory": enable_clear_memory,
        }
        guidance = "\n".join(f"- {TOOL_GUIDANCE[n]};" for n, on in enabled.items() if on)
        listed = "\n".join(f"- [{m.memory_id}] {m.memory}" for m in existing_memories or ())
        content = (
            f"{self.instructions}\n\nYour tools:\n{guidance or '(none)'}\n\n"
            f"<existing_memories>\n{listed or '(none)'}\n</existing_memories>"
        )
        return Message(role="system", content=content)

    # -- the model's work ---------------------------------------------------------------

    def create_user_memories(  # type: ignore[override]
        self,
        message: str | None = None,
        messages: list[Any] | None = None,
        agent_id: str | None = None,
        team_id: str | None = None,
        user_id: str | None = None,
        run_metrics: Any = None,
    ) -> str:
        said = [m.to_kit() if isinstance(m, Message) else m for m in messages or ()]
        return super().create_user_memories(message, said or None, user_id)

    async def acreate_user_memories(  # type: ignore[override]
        self,
        message: str | None = None,
        messages: list[Any] | None = None,
        agent_id: str | None = None,
        team_id: str | None = None,
        user_id: str | None = None,
        run_metrics: Any = None,
    ) -> str:
        said = [m.to_kit() if isinstance(m, Message) else m for m in messages or ()]
        return await super().acreate_user_memories(message, said or None, user_id)

    def update_memory_task(self, task: str, user_id: str | None = None) -> str:  # type: ignore[override]
        """Let the model change the user's memories as ``task`` says (the changes the
        flags allow)."""
        return super().update_memory_task(task, user_id)

    async def aupdate_memory_task(self, task: str, user_id: str | None = None) -> str:  # type: ignore[override]
        return await super().aupdate_memory_task(task, user_id)

    def create_or_update_memories(
        self,
        messages: list[Any],
        existing_memories: list[UserMemory],
        user_id: str,
        db: Any,
        agent_id: str | None = None,
        *,
        team_id: str | None = None,
        update_memories: bool = True,
        add_memories: bool = True,
        run_metrics: Any = None,
    ) -> str:
        """The model's changes from ``messages`` to ``user_id``'s memories in ``db``
        (additions and updates as these flags allow)."""
        flags = (add_memories, update_memories, self.delete_memories, self.clear_memories)
        return self._with_db(db, flags).create_user_memories(messages=messages, user_id=user_id)

    async def acreate_or_update_memories(
        self,
        messages: list[Any],
        existing_memories: list[UserMemory],
        user_id: str,
        db: Any,
        agent_id: str | None = None,
        *,
        team_id: str | None = None,
        update_memories: bool = True,
        add_memories: bool = True,
        run_metrics: Any = None,
    ) -> str:
        flags = (add_memories, update_memories, self.delete_memories, self.clear_memories)
        return await self._with_db(db, flags).acreate_user_memories(
            messages=messages, user_id=user_id
        )

    def run_memory_task(
        self,
        task: str,
        existing_memories: list[UserMemory],
        user_id: str,
        db: Any,
        delete_memories: bool = True,
        *,
        update_memories: bool = True,
        add_memories: bool = True,
        clear_memories: bool = True,
    ) -> str:
        """The model's changes to ``user_id``'s memories in ``db`` as ``task`` says, with
        the changes these flags allow."""
        flags = (add_memories, update_memories, delete_memories, clear_memories)
        return self._with_db(db, flags).update_memory_task(task, user_id)

    async def arun_memory_task(
        self,
        task: str,
        existing_memories: list[UserMemory],
        user_id: str,
        db: Any,
        delete_memories: bool = True,
        *,
        clear_memories: bool = True,
        update_memories: bool = True,
        add_memories: bool = True,
    ) -> str:
        flags = (add_memories, update_memories, delete_memories, clear_memories)
        return await self._with_db(db, flags).aupdate_memory_task(task, user_id)

    def _with_db(
        self, db: Any, flags: tuple[bool, bool, bool, bool] | None = None
    ) -> MemoryManager:
        """This manager on ``db`` (itself when it is its own), with these flags (add,
        update, delete, clear; default: its own)."""
        own = (self.add_memories, self.update_memories, self.delete_memories, self.clear_memories)
        if (db is None or db is self.db) and (flags is None or flags == own):
            return self
        add, update, delete, clear = flags or own
        return MemoryManager(
            self.model,
            system_message=self.system_message,
            memory_capture_instructions=self.memory_capture_instructions,
            additional_instructions=self.additional_instructions,
            db=self.db if db is None else db,
            delete_memories=delete,
            update_memories=update,
            add_memories=add,
            clear_memories=clear,
            runtime=self.runtime,
        )

    def search_user_memories(
        self,
        query: str | None = None,
        limit: int | None = None,
        retrieval_method: Literal["last_n", "first_n", "agentic"] | None = None,
        user_id: str | None = None,
    ) -> list[UserMemory]:
        """The user's memories: the last (newest) ``limit`` (the default), the first, or the
        ones the model finds relevant to ``query`` (``"agentic"``)."""
        memories = sorted(self.get_user_memories(user_id) or [], key=lambda m: m.created_at or 0)
        method = retrieval_method or "last_n"
        if method == "agentic":
            if not query:
                raise InvalidInputError("an agentic search needs its query=", field="query")
            found = self._relevant(query, memories)
            return found[:limit] if limit is not None else found
        if method == "first_n":
            return memories[:limit] if limit is not None else memories
        if method == "last_n":
            newest = list(reversed(memories))
            return newest[:limit] if limit is not None else newest
        raise InvalidInputError(
            f"retrieval_method is last_n, first_n or agentic, got {method!r}",
            field="retrieval_method",
        )

    def _relevant(self, query: str, memories: list[UserMemory]) -> list[UserMemory]:
        from ..agent import Agent
        from ..agent.failed_runs import raise_failed

        listed = "\n".join(f"- [{m.memory_id}] {m.memory}" for m in memories)
        finder: Agent[Any] = Agent(
            model=self.get_model(),
            instructions=["Give the ids of the memories that are relevant to the query."],
            output_schema=MemorySearchResponse,
        )
        asked = f"<memories>\n{listed}\n</memories>\n\n<query>{query}</query>"
        reply = raise_failed(finder.run(asked)).content
        by_id = {m.memory_id: m for m in memories}
        return [by_id[i] for i in reply.memory_ids if i in by_id]

    def optimize_memories(
        self,
        user_id: str | None = None,
        strategy: MemoryOptimizationStrategyType
        | str
        | MemoryOptimizationStrategy = MemoryOptimizationStrategyType.SUMMARIZE,
        apply: bool = True,
    ) -> list[UserMemory]:
        """The user's memories made fewer by ``strategy`` (a strategy's name, or a strategy
        of one's own); with ``apply``, they replace the stored ones."""
        memories = self.get_user_memories(user_id) or []
        if not memories:
            return []
        chosen = (
            strategy
            if isinstance(strategy, MemoryOptimizationStrategy)
            else MemoryOptimizationStrategyFactory.create_strategy(strategy)
        )
        optimized = chosen.optimize(memories, self.get_model())
        if apply:
            for memory in memories:
                if memory.memory_id is not None:
                    self.delete_user_memory(memory.memory_id, memory.user_id)
            for memory in optimized:
                self.add_user_memory(memory, memory.user_id)
        return optimized

    async def aoptimize_memories(
        self,
        user_id: str | None = None,
        strategy: MemoryOptimizationStrategyType
        | str
        | MemoryOptimizationStrategy = MemoryOptimizationStrategyType.SUMMARIZE,
        apply: bool = True,
    ) -> list[UserMemory]:
        import asyncio

        return await asyncio.to_thread(self.optimize_memories, user_id, strategy, apply)
