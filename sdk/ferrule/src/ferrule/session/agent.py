"""Agno's ``agno.session.agent``: `AgentSession`, a stored session as Agno's programs read it:
its ids, ``session_data`` (``session_name``, ``session_state``), metadata, runs and summary.

A db's ``get_session`` gives one (`ferrule.db.base.BaseDb`), made from the engine's records
(`from_kit`); its runs are the agent's `RunOutput` s, their ``messages`` Agno's `Message`
(as `get_messages` / `get_chat_history` give them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..models.message import Message
from .summary import SessionSummary

if TYPE_CHECKING:
    from ferrule_kit.stores.storage import Run as KitRun
    from ferrule_kit.stores.storage import Session as KitSession

__all__ = ["AgentSession"]

#: Runs whose messages are not history (Agno's default ``skip_statuses``).
NOT_HISTORY = ("paused", "cancelled", "error", "regenerated")


def _summary(value: Any) -> SessionSummary | None:
    return SessionSummary.from_dict(value) if isinstance(value, dict) else value


@attrs.define
class AgentSession:
    """A session of an agent (see the module docstring)."""

    session_id: str
    agent_id: str | None = None
    user_id: str | None = None
    session_data: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    agent_data: dict[str, Any] | None = None
    runs: list[RunOutput[Any]] | None = None
    summary: SessionSummary | None = attrs.field(default=None, converter=_summary)
    created_at: int | None = None
    updated_at: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out = attrs.asdict(self, recurse=False)
        out["runs"] = [_run_dict(r) for r in self.runs] if self.runs else None
        out["summary"] = self.summary.to_dict() if self.summary else None
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentSession | None:
        """The session of a dict (``to_dict``'s); None without a ``session_id``."""
        if not data or data.get("session_id") is None:
            return None
        known = {f.name for f in attrs.fields(cls)} - {"runs"}
        session = cls(**{k: v for k, v in data.items() if k in known})
        session.runs = list(data.get("runs") or []) or None
        return session

    @classmethod
    def from_kit(cls, session: KitSession, runs: Sequence[KitRun] | None = None) -> AgentSession:
        """Agno's view of the engine's session and runs."""
        from ..agent.stored import stored_output

        return cls(
            session_id=session.session_id,
            agent_id=session.agent_id,
            user_id=session.user_id,
            session_data={
                "session_name": session.name,
                "session_state": dict(session.session_state),
            },
            metadata=dict(session.metadata) or None,
            runs=[stored_output(r) for r in runs] if runs is not None else None,
            summary=(
                SessionSummary(session.summary.summary, list(session.summary.topics))
                if session.summary is not None
                else None
            ),
            created_at=int(session.created_at) or None,
            updated_at=int(session.updated_at) or None,
        )

    def upsert_run(self, run: RunOutput[Any]) -> None:
        """Add ``run``, or replace the run of its id."""
        runs = self.runs if self.runs is not None else []
        for index, existing in enumerate(runs):
            if existing.run_id == run.run_id:
                runs[index] = run
                break
        else:
            runs.append(run)
        self.runs = runs

    def get_run(self, run_id: str) -> RunOutput[Any] | None:
        return next((r for r in self.runs or () if r.run_id == run_id), None)

    def get_messages(
        self,
        agent_id: str | None = None,
        *,
        team_id: str | None = None,
        last_n_runs: int | None = None,
        limit: int | None = None,
        skip_roles: list[str] | None = None,
        skip_statuses: list[Any] | None = None,
        skip_history_messages: bool = True,
    ) -> list[Message]:
        """The messages of the session's runs, oldest first: of the last ``last_n_runs``
        runs (of ``agent_id``; a team's: none), at most the last ``limit`` (the first system
        message kept ahead of them), without ``skip_roles`` and runs in ``skip_statuses``
        (by default unfinished, failed and cancelled runs)."""
        if team_id is not None:
            return []
        statuses = {str(getattr(s, "value", s)).lower() for s in (skip_statuses or NOT_HISTORY)}
        runs = [
            r
            for r in self.runs or ()
            if str(getattr(r.status, "value", r.status)).lower() not in statuses
            and (agent_id is None or r.agent_id == agent_id)
        ]
        if last_n_runs is not None:
            runs = runs[-last_n_runs:] if last_n_runs > 0 else []
        system: Message | None = None
        messages: list[Message] = []
        for run in runs:
            for message in run.messages:
                if skip_roles and message.role in skip_roles:
                    continue
                if message.role == "system":
                    system = system or message
                else:
                    messages.append(message)
        if limit is not None:
            messages = messages[-limit:] if limit > 0 else []
        return [system, *messages] if system is not None else messages

    def get_chat_history(self, last_n_runs: int | None = None) -> list[Message]:
        """The user's and the assistant's messages, oldest first."""
        return self.get_messages(last_n_runs=last_n_runs, skip_roles=["system", "tool"])

    def get_tool_calls(self, num_calls: int | None = None) -> list[dict[str, Any]]:
        """The tool calls of the session's runs, newest first (at most ``num_calls``)."""
        calls = [
            call
            for run in reversed(self.runs or [])
            for message in reversed(run.messages)
            for call in message.tool_calls or ()
        ]
        return calls[:num_calls] if num_calls is not None else calls

    def get_session_summary(self) -> SessionSummary | None:
        return self.summary


def _run_dict(run: Any) -> dict[str, Any]:
    if isinstance(run, dict):
        return run
    return {
        "run_id": run.run_id,
        "agent_id": run.agent_id,
        "session_id": run.session_id,
        "user_id": run.user_id,
        "status": str(getattr(run.status, "value", run.status)),
        "content": run.content if isinstance(run.content, (str, dict, list)) else str(run.content),
        "messages": [m.to_dict() for m in run.messages],
    }


# Last, for the import cycle: the agent package's sessions module reads `AgentSession` as it
# loads, so the class exists before the agent package (where `RunOutput` lives) is loaded.
from ..agent.results import RunOutput  # noqa: E402
