"""Agno's ``agno.session.summary``: `SessionSummary` (what a session came to, and its topics)
and `SessionSummaryManager`, which has a model write it.

``SessionSummaryManager(model=...).create_session_summary(session)`` shows the model the
session's conversation (the last ``last_n_runs`` runs, at most ``conversation_limit``
messages) under its instructions (``session_summary_prompt``, else ferrule's own), asks for
a `SessionSummaryResponse` (a summary and its topics) with ``summary_request_message``, and
sets the session's ``summary``. The model call runs on ferrule's agent (one turn, no tools).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs
from ferrule_kernel import InvalidInputError

from ..models.message import Message

if TYPE_CHECKING:
    from ..metrics import RunMetrics
    from .agent import AgentSession

__all__ = ["SessionSummary", "SessionSummaryManager", "SessionSummaryResponse"]

#: What the model is told a summary is for, unless ``session_summary_prompt`` says otherwise.
SUMMARY_PROMPT = (
    "Summarize the conversation below for whoever continues it: what the user wants, what "
    "was decided or found, and anything still open. Be brief and state only what the "
    "conversation says. Also list its topics, a few words each."
)


@attrs.define
class SessionSummary:
    """A session's summary, its topics and when it was written."""

    summary: str
    topics: list[str] | None = None
    updated_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        fields = {
            "summary": self.summary,
            "topics": self.topics,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }
        return {k: v for k, v in fields.items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionSummary:
        updated = data.get("updated_at")
        if isinstance(updated, str):
            updated = datetime.fromisoformat(updated)
        elif isinstance(updated, (int, float)):
            updated = datetime.fromtimestamp(updated)
        return cls(data["summary"], data.get("topics"), updated)


@attrs.define(kw_only=True)
class SessionSummaryResponse:
    """What the model answers: the summary and its topics."""

    summary: str
    topics: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in attrs.asdict(self).items() if v is not None}

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_dict(), indent=2)


@attrs.define
class SessionSummaryManager:
    """Writes a session's summary with ``model`` (see the module docstring)."""

    id: str | None = None
    name: str | None = None
    owner_id: str | None = None
    owner_type: str | None = None
    model: Any = None
    session_summary_prompt: str | None = None
    summary_request_message: str = "Provide the summary of the conversation."
    summaries_updated: bool = False
    last_n_runs: int | None = None
    conversation_limit: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.id is None:
            self.id = str(uuid.uuid4())

    def get_response_format(self, model: Any) -> type[SessionSummaryResponse]:
        """What the model is asked to answer (every ferrule model takes an output schema)."""
        return SessionSummaryResponse

    def get_system_message(self, conversation: list[Message], response_format: Any) -> Message:
        """The instructions and the conversation, as the model's system message."""
        lines = "\n".join(
            f"{m.role}: {m.get_content_string()}"
            for m in conversation
            if m.role in ("user", "assistant") and m.content
        )
        prompt = self.session_summary_prompt or SUMMARY_PROMPT
        return Message(
            role="system", content=f"{prompt}\n\n<conversation>\n{lines}\n</conversation>"
        )

    def _conversation(self, session: AgentSession) -> list[Message]:
        messages = session.get_messages(last_n_runs=self.last_n_runs, skip_roles=["system", "tool"])
        if self.conversation_limit is not None:
            messages = messages[-self.conversation_limit :]
        return messages

    async def acreate_session_summary(
        self, session: AgentSession, run_metrics: RunMetrics | None = None
    ) -> SessionSummary | None:
        """Summarize ``session`` and set its ``summary`` (None when it has no conversation)."""
        # the Agent class, as the agent package hands it to its memory module (this module
        # sits below the agent package's top, which imports it through the agent's sessions)
        from ..agent.failed_runs import raise_failed
        from ..agent.memory import agent_class as Agent

        if self.model is None:
            raise InvalidInputError("a SessionSummaryManager needs its model=", field="model")
        conversation = self._conversation(session)
        if not conversation:
            return None
        system = self.get_system_message(conversation, SessionSummaryResponse)
        writer = Agent(
            model=self.model,
            system_message=system.get_content_string(),
            output_schema=SessionSummaryResponse,
        )
        reply = raise_failed(await writer.arun(self.summary_request_message)).content
        summary = SessionSummary(reply.summary, list(reply.topics or []), datetime.now())
        session.summary = summary
        self.summaries_updated = True
        return summary

    def create_session_summary(
        self, session: AgentSession, run_metrics: RunMetrics | None = None
    ) -> SessionSummary | None:
        """`acreate_session_summary`, waited for."""
        from ..shared_runtime import default_runtime

        return default_runtime().sync_bridge.run(self.acreate_session_summary(session, run_metrics))
