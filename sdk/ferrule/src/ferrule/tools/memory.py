"""Agno's ``agno.tools.memory``: `MemoryTools`, the user's memories in a database the model
reads and edits itself (``get_memories``, ``add_memory``, ``update_memory``,
``delete_memory``), with ``think`` and ``analyze`` to plan and check its changes.

The user is the run's (``run_context.user_id``), never an argument: a memory id the model
names reaches that user's memories only. Every change is noted in the run's session state
(``memory_operations``), thoughts and analyses under ``memory_thoughts`` and
``memory_analysis``. Results are JSON texts the model reads; a failure is one too
(``{"success": false, "error": ...}``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from ..db.schemas.memory import UserMemory
from .scratchpad import noted
from .tool_context import RunContext
from .toolkit import Toolkit

__all__ = ["MemoryTools"]

INSTRUCTIONS = (
    "You keep memories about the user in a database with these tools:\n"
    "- think: plan what to remember, change or forget;\n"
    "- get_memories: read the user's memories (each with its memory_id);\n"
    "- add_memory: store a new fact about the user, with topics;\n"
    "- update_memory: change a memory by its memory_id;\n"
    "- delete_memory: forget a memory by its memory_id;\n"
    "- analyze: check that the changes did what you meant.\n"
    "Read the memories before changing them, keep each memory to one fact, and do not "
    "store the same fact twice."
)
FEW_SHOT_EXAMPLES = (
    "<examples>\n"
    "User: I moved from Lyon to Porto.\n"
    "think(thought='The user's city changed: update the memory about Lyon.')\n"
    "get_memories()\n"
    "update_memory(memory_id='<the Lyon memory>', memory='The user lives in Porto', "
    "topics=['location'])\n"
    "analyze(analysis='The city memory now says Porto.')\n"
    "</examples>"
)


def _state(run_context: Any) -> dict[str, Any]:
    state = getattr(run_context, "session_state", None)
    if state is None:
        state = {}
        run_context.session_state = state
    return state


def _record(run_context: Any, operation: dict[str, Any]) -> None:
    _state(run_context).setdefault("memory_operations", []).append(operation)


def _failed(operation: str, error: str) -> str:
    return json.dumps({"success": False, "operation": operation, "error": error}, indent=2)


class MemoryTools(Toolkit):
    """``MemoryTools(db=SqliteDb(db_file="agent.db"))`` (see the module docstring): the
    ``enable_*`` flags (or ``all``) choose the tools; ``instructions`` replace the default
    guidance (given unless ``add_instructions=False``), to which ``add_few_shot`` adds an
    example (``few_shot_examples``: yours)."""

    DEFAULT_INSTRUCTIONS = INSTRUCTIONS
    FEW_SHOT_EXAMPLES = FEW_SHOT_EXAMPLES
    db: Any

    def __init__(
        self,
        db: Any,
        enable_get_memories: bool = True,
        *,
        enable_add_memory: bool = True,
        enable_update_memory: bool = True,
        enable_delete_memory: bool = True,
        enable_analyze: bool = True,
        enable_think: bool = True,
        instructions: str | None = None,
        add_instructions: bool = True,
        add_few_shot: bool = True,
        few_shot_examples: str | None = None,
        all: bool = False,
        **kwargs: Any,
    ) -> None:
        if instructions is None:
            instructions = self.DEFAULT_INSTRUCTIONS
            if add_few_shot:
                instructions += "\n" + (few_shot_examples or self.FEW_SHOT_EXAMPLES)
        self.instructions = instructions
        self.db = db
        chosen = (
            (self.think, enable_think),
            (self.get_memories, enable_get_memories),
            (self.add_memory, enable_add_memory),
            (self.update_memory, enable_update_memory),
            (self.delete_memory, enable_delete_memory),
            (self.analyze, enable_analyze),
        )
        super().__init__(
            name=kwargs.pop("name", "memory_tools"),
            tools=[tool for tool, wanted in chosen if wanted or all],
            instructions=instructions,
            add_instructions=add_instructions,
            **kwargs,
        )

    def think(self, run_context: RunContext, thought: str) -> str:
        """Plan what to remember, change or forget; your thoughts so far.

        Args:
            thought: The thought.
        """
        return noted(run_context, "memory_thoughts", thought, "Memory Thoughts:")

    def get_memories(self, run_context: RunContext) -> str:
        """The user's memories, as JSON (each with its memory_id)."""
        try:
            memories = self.db.get_user_memories(user_id=run_context.user_id)
        except Exception as exc:  # the model reads what went wrong
            return json.dumps({"error": str(exc)}, indent=2)
        found = [m.to_dict() for m in memories]
        _record(
            run_context,
            {"operation": "get_memories", "success": True, "memories": found, "error": None},
        )
        return json.dumps(found, indent=2)

    def add_memory(
        self, run_context: RunContext, memory: str, topics: list[str] | None = None
    ) -> str:
        """Store a new memory about the user; the memory stored, as JSON.

        Args:
            memory: The fact to remember.
            topics: Topics the memory is about.
        """
        made = UserMemory(
            memory=memory, memory_id=str(uuid.uuid4()), topics=topics, user_id=run_context.user_id
        )
        try:
            stored = self.db.upsert_user_memory(made).to_dict()
        except Exception as exc:
            return _failed("add_memory", str(exc))
        _record(
            run_context,
            {"operation": "add_memory", "success": True, "memory": stored, "error": None},
        )
        return json.dumps({"success": True, "operation": "add_memory", "memory": stored}, indent=2)

    def _own(self, run_context: RunContext, memory_id: str) -> UserMemory | None:
        found: UserMemory | None = self.db.get_user_memory(memory_id, user_id=run_context.user_id)
        return found

    def update_memory(
        self,
        run_context: RunContext,
        memory_id: str,
        memory: str | None = None,
        topics: list[str] | None = None,
    ) -> str:
        """Change one of the user's memories; the memory as stored, as JSON.

        Args:
            memory_id: The memory's id (from get_memories).
            memory: Its new text (kept when not given).
            topics: Its new topics (kept when not given).
        """
        try:
            existing = self._own(run_context, memory_id)
            if existing is None:
                return _failed("update_memory", f"Memory with ID {memory_id} not found")
            changed = UserMemory(
                memory=existing.memory if memory is None else memory,
                memory_id=memory_id,
                topics=existing.topics if topics is None else topics,
                user_id=existing.user_id,
            )
            stored = self.db.upsert_user_memory(changed).to_dict()
        except Exception as exc:
            return _failed("update_memory", str(exc))
        _record(
            run_context,
            {"operation": "update_memory", "success": True, "memory": stored, "error": None},
        )
        return json.dumps(
            {"success": True, "operation": "update_memory", "memory": stored}, indent=2
        )

    def delete_memory(self, run_context: RunContext, memory_id: str) -> str:
        """Forget one of the user's memories; what was deleted, as JSON.

        Args:
            memory_id: The memory's id (from get_memories).
        """
        try:
            existing = self._own(run_context, memory_id)
            if existing is None:
                return _failed("delete_memory", f"Memory with ID {memory_id} not found")
            self.db.delete_user_memory(memory_id, user_id=run_context.user_id)
        except Exception as exc:
            return _failed("delete_memory", str(exc))
        deleted = existing.to_dict()
        _record(
            run_context,
            {
                "operation": "delete_memory",
                "success": True,
                "memory_id": memory_id,
                "deleted_memory": deleted,
                "error": None,
            },
        )
        return json.dumps(
            {"success": True, "operation": "delete_memory", "memory_id": memory_id}, indent=2
        )

    def analyze(self, run_context: RunContext, analysis: str) -> str:
        """Check that your changes did what you meant; your analyses so far.

        Args:
            analysis: The analysis.
        """
        return noted(run_context, "memory_analysis", analysis, "Memory Analysis:")
