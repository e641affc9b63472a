"""Agno's ``agno.memory.strategies.summarize``: `SummarizeStrategy`, every memory of a user made
one summary of them all (their topics joined; the agent kept when all share one)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from ferrule_kernel import InvalidInputError

from ...db.schemas.memory import UserMemory
from ...models.message import Message
from .base import MemoryOptimizationStrategy

__all__ = ["SummarizeStrategy"]

PROMPT = (
    "You combine what is remembered about one user into one summary. Keep every fact, "
    "drop repetitions, write in the third person, and add nothing that the memories do not "
    "say. Reply with the summary only."
)


class SummarizeStrategy(MemoryOptimizationStrategy):
    """Every memory made one (see the module docstring)."""

    def get_system_prompt(self) -> str:
        return PROMPT

    def optimize(self, memories: list[UserMemory], model: Any) -> list[UserMemory]:
        if not memories:
            raise InvalidInputError("there are no memories to summarize", field="memories")
        user_id = memories[0].user_id
        if user_id is None:
            raise InvalidInputError("the memories name no user", field="user_id")
        texts = [m.memory for m in memories if m.memory]
        listed = "\n\n".join(f"Memory {i + 1}: {text}" for i, text in enumerate(texts))
        reply = model.response(
            messages=[
                Message(role="system", content=self.get_system_prompt()),
                Message(role="user", content=f"Summarize these memories:\n\n{listed}"),
            ]
        )
        topics = sorted({t for m in memories for t in m.topics or ()})
        agents = {m.agent_id for m in memories if m.agent_id}
        now = int(time.time())
        return [
            UserMemory(
                memory=reply.content or " ".join(texts),
                memory_id=str(uuid.uuid4()),
                topics=topics or None,
                user_id=user_id,
                agent_id=agents.pop() if len(agents) == 1 else None,
                created_at=now,
                updated_at=now,
            )
        ]
