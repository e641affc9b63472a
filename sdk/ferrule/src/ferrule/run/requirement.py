"""Agno's ``agno.run.requirement``: `RunRequirement`, what a paused run waits for (a tool
call to confirm or reject, its arguments from the user, or its result run outside the
agent), and `PauseType`, which of those.

A paused run's requirements (``output.requirements``, `RunPausedEvent.requirements`) are
the agent's own requirement objects (`ferrule.agent.ToolConfirmation`), with Agno's methods
(``confirm``, ``reject(note)``, ``provide_user_input``, ``set_external_execution_result``,
``is_resolved``, ``pause_type``...). `RunRequirement` is one made the way Agno makes it, from
a `ferrule.models.response.ToolExecution` (``RunRequirement(tool_execution=...)``, or
``RunRequirement.from_dict`` of what its ``to_dict`` stored), to hand `Agent.continue_run`
a decision on a run paused elsewhere.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Literal

import attrs
from ferrule_kit.content.messages import ToolCall

from ..agent.results import ToolConfirmation
from ..models.response import ToolExecution

__all__ = ["PauseType", "RunRequirement"]

#: What a paused tool call waits for.
PauseType = Literal["confirmation", "user_input", "user_feedback", "external_execution"]


def _now() -> datetime:
    return datetime.now(timezone.utc)


@attrs.define(init=False)
class RunRequirement(ToolConfirmation):
    """A decision a paused run waits for, on ``tool_execution``'s call (its
    ``tool_call_id`` names the call to `Agent.continue_run`)."""

    id: str = ""
    created_at: datetime = attrs.Factory(_now)

    def __init__(
        self,
        tool_execution: ToolExecution,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> None:
        call_id = tool_execution.tool_call_id or f"call_{uuid.uuid4().hex[:12]}"
        call = ToolCall(
            call_id, tool_execution.tool_name or "", dict(tool_execution.tool_args or {})
        )
        schema = tool_execution.user_input_schema
        self.__attrs_init__(
            call,
            tool_execution.confirmed,
            tool_execution.confirmation_note,
            bool(tool_execution.external_execution_required),
            tool_execution.result,
            list(schema) if schema is not None else None,
            id or str(uuid.uuid4()),
            created_at or _now(),
        )

    @property
    def confirmation(self) -> bool | None:
        """True (confirmed), False (rejected) or None (not decided yet)."""
        return self.confirmed

    @property
    def confirmation_note(self) -> str | None:
        """Why it was rejected."""
        return self.reason

    @property
    def external_execution_result(self) -> Any:
        return self.result if self.external_execution else None

    def agno_tool_execution(self) -> ToolExecution:
        """The call as Agno's `ToolExecution`, with what was decided on it."""
        call = self.tool_call
        return ToolExecution(
            tool_call_id=call.id,
            tool_name=call.name,
            tool_args=dict(call.arguments) if isinstance(call.arguments, dict) else None,
            result=None if self.result is None else str(self.result),
            requires_confirmation=self.pause_type == "confirmation" or None,
            confirmed=self.confirmed,
            confirmation_note=self.reason,
            requires_user_input=self.user_input_schema is not None or None,
            user_input_schema=self.user_input_schema,
            external_execution_required=self.external_execution or None,
        )

    def to_dict(self) -> dict[str, Any]:
        """Agno's stored shape: the id, when it was made, the decision and the call."""
        out: dict[str, Any] = {
            "id": self.id,
            "created_at": self.created_at.isoformat(),
            "confirmation": self.confirmed,
            "confirmation_note": self.reason,
            "external_execution_result": self.external_execution_result,
            "tool_execution": self.agno_tool_execution().to_dict(),
        }
        if self.user_input_schema is not None:
            out["user_input_schema"] = [f.to_dict() for f in self.user_input_schema]
        return {k: v for k, v in out.items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRequirement:
        """The requirement ``data`` (a `to_dict`) describes; a decision at the top level
        (``confirmation``, ``external_execution_result``) is the call's."""
        from ferrule_kernel import InvalidInputError

        tool = data.get("tool_execution")
        if not isinstance(tool, (dict, ToolExecution)):
            raise InvalidInputError(
                "a requirement names its tool call: 'tool_execution' is missing",
                field="tool_execution",
            )
        execution = tool if isinstance(tool, ToolExecution) else ToolExecution.from_dict(tool)
        created = data.get("created_at")
        requirement = cls(
            execution,
            id=data.get("id"),
            created_at=datetime.fromisoformat(created) if isinstance(created, str) else created,
        )
        if data.get("confirmation") is not None:
            requirement.confirmed = data["confirmation"]
            requirement.reason = data.get("confirmation_note")
        if data.get("external_execution_result") is not None:
            requirement.set_external_execution_result(data["external_execution_result"])
        return requirement
