"""Agno's history tools, which the model calls to read what the db holds instead of being
given it: ``read_chat_history`` (`get_chat_history`: the session's messages),
``read_tool_call_history`` (`get_tool_call_history`: its tool calls, newest first) and
``search_past_sessions`` (`search_past_sessions`: the user's other sessions, newest first,
each with a preview of its first runs; `read_past_session`: one of them in full).

Each reads the session of the run that calls it, and only the run's user's sessions when
the run has a user: a session id the model gives never reaches another user's session.
Without a db, there is nothing to read (an empty list, or a sentence saying so).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from ferrule_kit.stores.storage import ListSessionsInput, SessionsResult

from ..tools import Tool, as_tools
from ..tools.tool_context import ToolContext
from .results import kit_messages

if TYPE_CHECKING:
    from ..session.agent import AgentSession

#: How many past sessions `search_past_sessions` lists, and how many of each one's first
#: runs it previews, unless the agent says (Agno's defaults).
PAST_SESSIONS = 20
PAST_SESSION_RUNS = 3
#: The length of a preview's texts.
PREVIEW_CHARS = 200


class SessionReader(Protocol):
    """What the tools read through (the agent's `sessions.AgentSessions`)."""

    async def storage(self) -> str | None: ...
    async def db_call(self, method: str, inputs: Any, result: type[Any]) -> Any: ...
    async def aget_session(
        self, session_id: str | None = None, user_id: str | None = None
    ) -> AgentSession | None: ...


class HistoryView(Protocol):
    """The options of the history tools, as the agent holds them now."""

    read_chat_history: bool
    read_tool_call_history: bool
    search_past_sessions: bool
    num_past_sessions_to_search: int | None
    num_past_session_runs_in_search: int | None


def history_tools(agent: HistoryView, reader: SessionReader) -> list[Tool]:
    """The history tools ``agent`` gives its model (none unless asked for)."""
    made: list[Any] = []
    if agent.read_chat_history:
        made.append(chat_history_tool(reader))
    if agent.read_tool_call_history:
        made.append(tool_call_history_tool(reader))
    if agent.search_past_sessions:
        limit = agent.num_past_sessions_to_search or PAST_SESSIONS
        runs = agent.num_past_session_runs_in_search or PAST_SESSION_RUNS
        made += [past_sessions_tool(reader, limit, runs), read_past_session_tool(reader)]
    tools = [as_tools(f) for f in made]
    return [t for t in tools if isinstance(t, Tool)]


async def _session(reader: SessionReader, context: ToolContext[Any]) -> AgentSession | None:
    if await reader.storage() is None or context.session_id is None:
        return None
    return await reader.aget_session(context.session_id, context.user_id)


def chat_history_tool(reader: SessionReader) -> Any:
    async def get_chat_history(context: ToolContext[Any], num_chats: int | None = None) -> str:
        """Get the chat history between the user and you, oldest first, as a JSON list of
        messages.

        Args:
            num_chats: How many of the last chats to return (a chat is the user's message
                and your reply); all of them when not given.
        """
        session = await _session(reader, context)
        messages = session.get_messages(skip_roles=["system"]) if session is not None else []
        if num_chats is not None:
            messages = messages[-2 * num_chats :] if num_chats > 0 else []
        return json.dumps([m.to_dict() for m in messages], ensure_ascii=False, default=str)

    return get_chat_history


def tool_call_history_tool(reader: SessionReader) -> Any:
    async def get_tool_call_history(context: ToolContext[Any], num_calls: int | None = 3) -> str:
        """Get the tools you called in this session, newest first, as a JSON list.

        Args:
            num_calls: How many calls to return (3 when not given; null for all of them).
        """
        session = await _session(reader, context)
        calls = session.get_tool_calls(num_calls=num_calls) if session is not None else []
        return json.dumps(calls, ensure_ascii=False, default=str)

    return get_tool_call_history


def _short(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "..."


def session_preview(session: AgentSession, num_runs: int) -> dict[str, Any]:
    """A session's id, when it was created, and its first ``num_runs`` runs' first user
    and assistant texts (shortened)."""
    previews = []
    for run in (session.runs or [])[:num_runs]:
        texts = {"user": "", "assistant": ""}
        for message in kit_messages(run.messages or []):
            if message.role in texts and not texts[message.role] and message.text:
                texts[message.role] = _short(message.text)
        if texts["user"] or texts["assistant"]:
            previews.append(texts)
    return {"session_id": session.session_id, "created_at": session.created_at, "runs": previews}


def past_sessions_tool(reader: SessionReader, limit: int, num_runs: int) -> Any:
    async def search_past_sessions(context: ToolContext[Any]) -> str:
        """List your earlier sessions with this user, newest first, each with a short
        preview of its first exchanges, as a JSON list. Read one in full with
        read_past_session.
        """
        if await reader.storage() is None:
            return json.dumps([])
        listed = await reader.db_call(
            "list_sessions", ListSessionsInput(user_id=context.user_id), SessionsResult
        )
        records = sorted(listed.sessions, key=lambda s: s.created_at, reverse=True)
        found: list[dict[str, Any]] = []
        for record in records:
            if len(found) >= limit:
                break
            if record.session_id == context.session_id or not record.run_count:
                continue
            session = await reader.aget_session(record.session_id, context.user_id)
            if session is not None and session.runs:
                found.append(session_preview(session, num_runs))
        return json.dumps(found, ensure_ascii=False, default=str)

    return search_past_sessions


def read_past_session_tool(reader: SessionReader) -> Any:
    async def read_past_session(
        context: ToolContext[Any], session_id: str, num_runs: int | None = None
    ) -> str:
        """Read the conversation of one of your earlier sessions (find it with
        search_past_sessions first).

        Args:
            session_id: The session's id, from search_past_sessions.
            num_runs: How many of its first runs to read; all of them when not given.
        """
        if await reader.storage() is None:
            return "No database configured."
        session = await reader.aget_session(session_id, context.user_id)
        if session is None or not session.runs:
            return "Session not found."
        if context.user_id is not None and session.user_id != context.user_id:
            return "Session not found."
        lines = [f"Session: {session.session_id}"]
        if session.created_at:
            lines.append(f"Created: {session.created_at}")
        lines.append("")
        runs = session.runs if num_runs is None else session.runs[:num_runs]
        for run in runs:
            for message in kit_messages(run.messages or []):
                if message.role in ("user", "assistant") and message.text:
                    label = "User" if message.role == "user" else "Assistant"
                    lines += [f"{label}: {message.text}", ""]
        return "\n".join(lines)

    return read_past_session
