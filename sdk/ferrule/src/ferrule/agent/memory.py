"""User memories and session summaries: small model calls at the end of a completed run.

`MemoryManager` reads what the user said in a run, with the memories already stored for
that user, and changes them through three tools its model calls: ``add_memory``,
``update_memory`` and ``delete_memory`` (so the model decides, and the store only ever
sees whole, validated memories of that one user). `summarize` folds a run into the
session's summary with one structured-output call. Both run on the agent's own model
unless given another, as an inner `Agent` with no db.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
from ferrule_kernel import FerruleError, InvalidInputError, get_logger
from ferrule_kit.content.messages import Message, converter
from ferrule_kit.stores.storage import (
    DeletedResult,
    ListMemoriesInput,
    MemoriesResult,
    MemoryRef,
    MemoryResult,
    SessionSummary,
    UpsertMemoryInput,
    UserMemory,
)

from .._bridge import Bridge, blocking, on_bridge_loop
from ..metrics import ModelType, RunMetrics, add_helper_metrics
from ..tools import Tool, ToolContext, ToolError, as_tools
from .deps import SecondModels
from .failed_runs import raise_failed
from .inputs import DEFAULT_USER_ID, as_message
from .langmodel import LangModel, component_name

if TYPE_CHECKING:
    from ..session.summary import SessionSummaryManager
    from .state import RunState

log = get_logger("ferrule.agent")

#: The `Agent` class, which a standalone `MemoryManager` runs its memory model as (an
#: agent's own memory calls get it from the agent). This module sits below ``agent`` and
#: must not import it: the package (``ferrule.agent``), which holds both, sets it.
agent_class: Any = None

T = TypeVar("T")

MEMORY_INSTRUCTIONS = (
    "You manage what an assistant remembers about a user across conversations: short, "
    "self-contained facts about the user (who they are, their preferences, plans, and what "
    "they asked to be remembered). Read the user's new messages and the memories already "
    "stored, then change them with your tools (listed below). Do not store what is only "
    "about this conversation, and never duplicate a memory. When nothing needs to change, "
    "call no tool. When done, reply with one word: done."
)

#: What each memory tool is for, in the memory model's instructions.
TOOL_GUIDANCE = {
    "add_memory": "call add_memory for each new fact worth remembering",
    "update_memory": "call update_memory when a stored memory changed or can be made more precise",
    "delete_memory": "call delete_memory when a stored memory is no longer true or the user "
    "asks to forget it",
    "clear_memory": "call clear_memory when the user asks to forget everything",
}

SUMMARY_INSTRUCTIONS = (
    "You keep a brief summary of a conversation between a user and an assistant, for the "
    "assistant to read in later conversations. Given the summary so far (if any) and the "
    "newest exchange, write the updated summary: the facts, decisions and open questions "
    "that matter, in a few sentences, and a few topics. Reply with JSON only."
)


class MemoryManager:
    """Keeps a user's memories with a model (``Agent(enable_user_memories=True)`` makes a
    default one; pass ``Agent(memory_manager=MemoryManager(...))`` to choose).

    ``model``: a `LocalModel`, `APIModel`, `TestModel` or `LangModel` for the memory calls
    (default: the agent's own model). ``instructions`` replace the default ones
    (`MEMORY_INSTRUCTIONS`); ``additional_instructions`` are appended to them.
    ``tool_call_limit``: memory changes per run, at most. The flags say which changes the
    model may make: ``add_memories``, ``update_memories``, ``delete_memories`` and
    ``clear_memories`` (forget all of the user's memories). After a run the model may always
    delete a memory the user's messages make untrue (Agno's way); a task
    (`update_memory_task`, the agent's ``update_user_memory`` tool) is given exactly the
    flagged changes.

    Used on its own, as Agno's cookbook does, it needs ``db`` (a `SqliteDb`, `PostgresDb`,
    `InMemoryDb`...): `add_user_memory`, `get_user_memories`, `get_user_memory`,
    `replace_user_memory`, `delete_user_memory` and `clear_user_memories` act on the db
    directly, and `create_user_memories` lets ``model`` decide from a user's messages, as
    an agent's run would. Each has its async twin (``a`` + name). They run on ``runtime``
    (default: the process's shared one).
    """

    def __init__(
        self,
        model: Any = None,
        *,
        db: Any = None,
        instructions: str | None = None,
        additional_instructions: str | None = None,
        tool_call_limit: int = 10,
        runtime: Any = None,
        add_memories: bool = True,
        update_memories: bool = True,
        delete_memories: bool = True,
        clear_memories: bool = False,
    ) -> None:
        if db is not None and not hasattr(db, "component_type"):
            raise InvalidInputError(
                f"db must be a SqliteDb, PostgresDb or InMemoryDb, got {type(db).__name__}",
                field="db",
            )
        if isinstance(tool_call_limit, bool) or not isinstance(tool_call_limit, int):
            raise InvalidInputError(
                "tool_call_limit must be a whole number", field="tool_call_limit"
            )
        self.model = model
        self.db = db
        self.instructions = instructions or MEMORY_INSTRUCTIONS
        if additional_instructions:
            self.instructions += "\n\n" + additional_instructions
        self.tool_call_limit = tool_call_limit
        flags = {
            "add_memories": add_memories,
            "update_memories": update_memories,
            "delete_memories": delete_memories,
            "clear_memories": clear_memories,
        }
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise InvalidInputError(f"{name} must be True or False", field=name)
        self.add_memories, self.update_memories = add_memories, update_memories
        self.delete_memories, self.clear_memories = delete_memories, clear_memories
        self._runtime = runtime
        self._storage: str | None = None
        self._models: dict[str, LangModel] = {}  # the model, once defined on the runtime

    def __repr__(self) -> str:
        return f"MemoryManager(model={self.model!r})"

    # -- on its own, over its db -------------------------------------------------------------

    @property
    def runtime(self) -> Any:
        if self._runtime is None:
            from ..shared_runtime import default_runtime

            self._runtime = default_runtime()
        return self._runtime

    @property
    def sync_bridge(self) -> Bridge:
        bridge: Bridge = self.runtime.sync_bridge
        return bridge

    async def _db(self, method: str, inputs: Any, result: type[T]) -> T:
        if self.db is None:
            raise InvalidInputError(
                "a MemoryManager used on its own keeps memories in a db: "
                "MemoryManager(db=SqliteDb(db_file=...))",
                field="db",
            )
        if self._storage is None:
            name = component_name("memory_db")
            await self.runtime.adefine(
                self.db.component_type, name, self.db.attributes(self.runtime)
            )
            self._storage = name
        data = await self.runtime.acall_method(self._storage, method, converter.unstructure(inputs))
        return converter.structure(data, result)

    @on_bridge_loop
    async def aadd_user_memory(
        self, memory: UserMemory | str, user_id: str | None = None, topics: list[str] | None = None
    ) -> str:
        """Store a memory for ``user_id`` (default ``"default"``, or the `UserMemory`'s own
        user); its id."""
        if isinstance(memory, UserMemory):
            inputs = UpsertMemoryInput(
                user_id or memory.user_id, memory.memory, topics or list(memory.topics)
            )
        else:
            inputs = UpsertMemoryInput(user_id or DEFAULT_USER_ID, memory, topics or [])
        stored = (await self._db("upsert_memory", inputs, MemoryResult)).memory
        assert stored is not None  # upsert_memory returns the memory it stored
        return stored.memory_id

    add_user_memory = blocking(aadd_user_memory)

    @on_bridge_loop
    async def aget_user_memories(self, user_id: str | None = None) -> list[UserMemory]:
        """``user_id``'s memories (default ``"default"``), oldest first."""
        inputs = ListMemoriesInput(user_id or DEFAULT_USER_ID)
        return (await self._db("list_memories", inputs, MemoriesResult)).memories

    get_user_memories = blocking(aget_user_memories)

    @on_bridge_loop
    async def aget_user_memory(
        self, memory_id: str, user_id: str | None = None
    ) -> UserMemory | None:
        ref = MemoryRef(memory_id, user_id or DEFAULT_USER_ID)
        return (await self._db("get_memory", ref, MemoryResult)).memory

    get_user_memory = blocking(aget_user_memory)

    @on_bridge_loop
    async def areplace_user_memory(
        self, memory_id: str, memory: UserMemory | str, user_id: str | None = None
    ) -> str:
        """Replace the memory ``memory_id`` of ``user_id`` (refused when it has none)."""
        user = user_id or DEFAULT_USER_ID
        if (await self._db("get_memory", MemoryRef(memory_id, user), MemoryResult)).memory is None:
            raise InvalidInputError(f"user {user!r} has no memory {memory_id!r}", field="memory_id")
        text, topics = (
            (memory.memory, list(memory.topics)) if isinstance(memory, UserMemory) else (memory, [])
        )
        inputs = UpsertMemoryInput(user, text, topics, memory_id)
        await self._db("upsert_memory", inputs, MemoryResult)
        return memory_id

    replace_user_memory = blocking(areplace_user_memory)

    @on_bridge_loop
    async def adelete_user_memory(self, memory_id: str, user_id: str | None = None) -> None:
        ref = MemoryRef(memory_id, user_id or DEFAULT_USER_ID)
        if not (await self._db("delete_memory", ref, DeletedResult)).deleted:
            raise InvalidInputError(f"no memory {memory_id!r} of this user", field="memory_id")

    delete_user_memory = blocking(adelete_user_memory)

    @on_bridge_loop
    async def aclear_user_memories(self, user_id: str | None = None) -> None:
        """Forget every memory of ``user_id``."""
        for memory in await self.aget_user_memories(user_id):
            await self._db(
                "delete_memory", MemoryRef(memory.memory_id, memory.user_id), DeletedResult
            )

    clear_user_memories = blocking(aclear_user_memories)

    def _standalone_models(self) -> SecondModels:
        if self.model is None:
            raise InvalidInputError(
                "a MemoryManager used on its own needs its model: MemoryManager(model=..., db=...)",
                field="model",
            )
        return SecondModels(
            self.runtime, "memory_manager", self._no_main_model, self._models, agent_class, self._db
        )

    @on_bridge_loop
    async def acreate_user_memories(
        self,
        message: str | None = None,
        messages: list[Any] | None = None,
        user_id: str | None = None,
    ) -> str:
        """Let ``model`` add, update or delete ``user_id``'s memories from what the user
        said (``message``, or the user ``messages``), as after an agent's run."""
        said = [message] if message else []
        for index, item in enumerate(messages or ()):
            said.append(as_message(item, index).text)
        said = [text for text in said if text]
        if not said:
            raise InvalidInputError("give the user's message or messages", field="message")
        await manage_memories(self._standalone_models(), self, user_id or DEFAULT_USER_ID, said)
        return "Memories updated"

    create_user_memories = blocking(acreate_user_memories)

    @on_bridge_loop
    async def aupdate_memory_task(self, task: str, user_id: str | None = None) -> str:
        """Let ``model`` change ``user_id``'s memories as ``task`` says, with the changes
        the flags allow (``add_memories``, ``update_memories``, ``delete_memories``,
        ``clear_memories``)."""
        if not isinstance(task, str) or not task.strip():
            raise InvalidInputError("give the task, what to change", field="task")
        models = self._standalone_models()
        await manage_memories(models, self, user_id or DEFAULT_USER_ID, [task], task=True)
        return "Memories updated"

    update_memory_task = blocking(aupdate_memory_task)

    def tool_names(self, task: bool) -> list[str]:
        """The memory tools the model gets: a task's as the flags say; after a run, the
        flagged additions and updates, and deletion always (Agno's)."""
        names = []
        if self.add_memories:
            names.append("add_memory")
        if self.update_memories:
            names.append("update_memory")
        if self.delete_memories or not task:
            names.append("delete_memory")
        if self.clear_memories and task:
            names.append("clear_memory")
        return names

    @staticmethod
    def _no_main_model() -> LangModel:
        raise AssertionError("a standalone MemoryManager always has its own model")


def _memory_tools(models: SecondModels, user_id: str, names: list[str]) -> list[Tool]:
    """The memory manager's tools of ``names``, acting on ``user_id``'s memories only. A
    turn's tool calls run concurrently; these take turns, in the order the model asked
    for them, so that memories are stored (and listed) in that order and an update follows
    its add."""
    in_order = asyncio.Lock()  # FIFO: the calls' tasks reach it in the calls' order

    async def add_memory(memory: str, topics: list[str] | None = None) -> str:
        """Remember a new fact about the user.

        Args:
            memory: The fact, as one short sentence about the user.
            topics: A few one-word topics of the fact (e.g. "name", "food").
        """
        inputs = UpsertMemoryInput(user_id, memory, topics or [], agent_id=models.agent_id)
        async with in_order:
            stored = (await models.db("upsert_memory", inputs, MemoryResult)).memory
        assert stored is not None  # upsert_memory returns the memory it stored
        return f"added memory {stored.memory_id}"

    async def update_memory(memory_id: str, memory: str, topics: list[str] | None = None) -> str:
        """Replace a stored memory with a corrected or more precise one.

        Args:
            memory_id: The id of the stored memory.
            memory: The new fact, as one short sentence about the user.
            topics: A few one-word topics of the fact.
        """
        ref = MemoryRef(memory_id, user_id)
        inputs = UpsertMemoryInput(user_id, memory, topics or [], memory_id, models.agent_id)
        async with in_order:
            if (await models.db("get_memory", ref, MemoryResult)).memory is None:
                raise ToolError(f"there is no memory {memory_id!r}")
            await models.db("upsert_memory", inputs, MemoryResult)
        return f"updated memory {memory_id}"

    async def delete_memory(memory_id: str) -> str:
        """Forget a stored memory.

        Args:
            memory_id: The id of the stored memory.
        """
        async with in_order:
            deleted = await models.db("delete_memory", MemoryRef(memory_id, user_id), DeletedResult)
        if not deleted.deleted:
            raise ToolError(f"there is no memory {memory_id!r}")
        return f"deleted memory {memory_id}"

    async def clear_memory() -> str:
        """Forget every memory of the user."""
        async with in_order:
            found = await models.db("list_memories", ListMemoriesInput(user_id), MemoriesResult)
            for memory in found.memories:
                await models.db(
                    "delete_memory", MemoryRef(memory.memory_id, user_id), DeletedResult
                )
        return f"cleared {len(found.memories)} memories"

    functions = {
        "add_memory": add_memory,
        "update_memory": update_memory,
        "delete_memory": delete_memory,
        "clear_memory": clear_memory,
    }
    tools = [as_tools(functions[name]) for name in names]
    return [t for t in tools if isinstance(t, Tool)]


def _listed(memories: list[UserMemory]) -> str:
    if not memories:
        return "(none)"
    return "\n".join(
        f"- [{m.memory_id}] {m.memory}" + (f" (topics: {', '.join(m.topics)})" if m.topics else "")
        for m in memories
    )


async def update_memories(
    models: SecondModels, manager: MemoryManager | None, run: RunState
) -> None:
    """Let the memory manager's model change the user's memories after ``run``."""
    context = run.session
    assert context is not None
    said = [m.text for m in run.messages[context.own :] if m.role == "user" and m.text]
    if not said:
        return
    manager = manager or MemoryManager()
    try:
        used = await manage_memories(models, manager, context.user_id or DEFAULT_USER_ID, said)
    except FerruleError as exc:  # the run's answer stands; its memories wait for the next
        log.warning("memories_not_updated", run_id=run.id, error=exc.message)
        return
    if used is not None:
        add_helper_metrics(run.metrics, ModelType.MEMORY_MODEL, used)


async def manage_memories(
    models: SecondModels,
    manager: MemoryManager,
    user_id: str,
    said: list[str],
    task: bool = False,
) -> RunMetrics | None:
    """The memory manager's model changes ``user_id``'s memories from what they ``said``
    (or, ``task``, as the task says), with the tools the manager's flags allow; the
    metrics of its calls are returned (None: no change was allowed, no call made)."""
    names = manager.tool_names(task)
    if not names:
        return None
    stored = await models.db("list_memories", ListMemoriesInput(user_id), MemoriesResult)
    lm = await models.model("memory", manager.model)
    guidance = "\n".join(f"- {TOOL_GUIDANCE[name]};" for name in names)
    helper = models.new_agent(
        lm,
        system_message=f"{manager.instructions}\n\nYour tools:\n{guidance}",
        tools=_memory_tools(models, user_id, names),
        tool_call_limit=manager.tool_call_limit,
    )
    heading = "task" if task else "new_user_messages"
    prompt = (
        f"<stored_memories>\n{_listed(stored.memories)}\n</stored_memories>\n\n"
        f"<{heading}>\n" + "\n".join(f"- {text}" for text in said) + f"\n</{heading}>"
    )
    return raise_failed(await helper.arun([Message("user", prompt)], user_id=user_id)).metrics


def agentic_memory_tool(models: Callable[[], SecondModels], manager: MemoryManager) -> Tool:
    """``enable_agentic_memory``'s tool: ``update_user_memory(task)``, the memory manager's
    model changing the run's user's memories as the task says (the flagged changes)."""

    async def update_user_memory(task: str, context: ToolContext[Any]) -> str:
        """Change what you remember about the user: add, update, delete or clear memories.
        Describe the change in detail.

        Args:
            task: What to change in the user's memories, in detail.
        """
        user_id = context.user_id or DEFAULT_USER_ID
        await manage_memories(models(), manager, user_id, [task], task=True)
        return "Memories updated"

    tool = as_tools(update_user_memory)
    assert isinstance(tool, Tool)
    return tool


@attrs.frozen
class _SummaryReply:
    summary: str
    topics: list[str] = attrs.Factory(list)


async def summarize(
    models: SecondModels, run: RunState, manager: SessionSummaryManager | None = None
) -> SessionSummary | None:
    """The session's summary updated with ``run`` (None if the model call failed), by
    ``manager``'s model and prompt when given (Agno's ``session_summary_manager``)."""
    context = run.session
    assert context is not None
    lines = [
        f"{m.role}: {m.text}"
        for m in run.messages[context.own :]
        if m.role in ("user", "assistant") and m.text
    ]
    previous = context.summary.summary if context.summary is not None else "(none yet)"
    prompt = (
        f"<summary_so_far>\n{previous}\n</summary_so_far>\n\n"
        "<newest_exchange>\n" + "\n".join(lines) + "\n</newest_exchange>"
    )
    model, instructions = None, SUMMARY_INSTRUCTIONS
    if manager is not None:
        model, instructions = manager.model, manager.session_summary_prompt or instructions
    try:
        lm = await models.model("summary", model)
        helper = models.new_agent(lm, system_message=instructions, output_schema=_SummaryReply)
        output = raise_failed(await helper.arun([Message("user", prompt)]))
        reply = output.content
    except FerruleError as exc:
        log.warning("summary_not_updated", run_id=run.id, error=exc.message)
        return None
    add_helper_metrics(run.metrics, ModelType.SESSION_SUMMARY_MODEL, output.metrics)
    if manager is not None:
        manager.summaries_updated = True
    return SessionSummary(reply.summary, list(reply.topics), time.time())
