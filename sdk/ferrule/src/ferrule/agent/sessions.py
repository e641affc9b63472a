"""Sessions: what an `Agent` with a ``db`` keeps between runs and processes.

`AgentSessions`, the collaborator of `Agent` that talks to its storage component (the
contract of `ferrule_kit.stores.storage`, reached through the runtime, so it works in-process and
over ``ferrule serve`` alike) and gives the Agent reference's session methods, each in
Agno's shape: `get_session` (an Agno `ferrule.session.AgentSession`, with its runs),
`save_session`, `delete_session`, `fork_session`, the session's name
(`get_session_name`, `set_session_name`, a model's `generate_session_name`), state
(`get_session_state`, `update_session_state`), summary, metrics, messages
(`get_session_messages`, `get_chat_history`: Agno's `ferrule.models.message.Message`),
runs (`get_run_output`, `get_last_run_output`) and the user's memories. A run's two ends in
its session are `run_sessions.RunSessions`'.
"""

from __future__ import annotations

import asyncio
import copy
import json
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message as KitMessage
from ferrule_kit.content.messages import converter
from ferrule_kit.stores.storage import (
    AppendRunInput,
    AppendRunResult,
    DeletedResult,
    GetMessagesInput,
    GetRunInput,
    GetRunsInput,
    ListMemoriesInput,
    MemoriesResult,
    MessagesResult,
    Run,
    RunResult,
    RunsResult,
    Session,
    SessionRef,
    SessionResult,
    UpdateSessionStateInput,
    UpsertSessionInput,
)
from ferrule_kit.stores.storage import SessionSummary as KitSummary

from .._bridge import Bridge, blocking, on_bridge_loop
from ..metrics import RunMetrics, SessionMetrics
from ..models.message import Message
from ..session.agent import AgentSession
from ..session.summary import SessionSummary
from .deps import SecondModels
from .failed_runs import raise_failed
from .inputs import DEFAULT_USER_ID
from .langmodel import component_name
from .results import RunOutput
from .stored import HISTORY_KEY, stored_output

if TYPE_CHECKING:
    from ..db.schemas.memory import UserMemory

T = TypeVar("T")

#: The run statuses `get_session_messages` leaves out unless told (Agno's).
SKIPPED_STATUSES = ("paused", "cancelled", "error", "regenerated")
#: What `generate_session_name` asks the model.
NAME_INSTRUCTIONS = (
    "Name the conversation below in at most 5 words. Reply with the name only, without quotes."
)


class StoredSession(Protocol):
    """What a run's context is built from of a stored session (Agno's `AgentSession`)."""

    user_id: str | None
    session_data: dict[str, Any] | None
    summary: Any


class AgentSessionView(Protocol):
    """What `AgentSessions` reads of its agent's settings, as they are at each call (Agno's
    users set them on the agent: ``agent.session_id = ...``)."""

    runtime: Any
    db: Any
    id: str
    session_id: str
    user_id: str | None
    session_state: dict[str, Any]
    cache_session: bool


def agno_session(stored: Session, runs: Sequence[Run] | None = None) -> AgentSession:
    """Agno's view of a stored session (and its runs)."""
    return AgentSession.from_kit(stored, runs)


def _kit_summary(summary: Any) -> KitSummary | None:
    """An Agno `SessionSummary` (or the engine's) as the engine's."""
    if summary is None or isinstance(summary, KitSummary):
        return summary
    updated: Any = getattr(summary, "updated_at", None)
    seconds = updated.timestamp() if hasattr(updated, "timestamp") else updated
    return KitSummary(summary.summary, list(summary.topics or []), seconds)


class AgentSessions:
    """Sessions, state, history and memories of an `Agent` (see the module docstring),
    over its settings, its own conversation (a `query` run without a db starts from it)
    and its second models (a session's name written by its model)."""

    #: The name its sync twins' errors give (they are `Agent`'s methods to users).
    shown_as = "Agent"

    def __init__(
        self,
        settings: AgentSessionView,
        history: list[KitMessage],
        second_models: Callable[[], SecondModels],
    ) -> None:
        self.settings = settings
        self.history = history
        self.second_models = second_models
        #: The storage component's name once defined, and whether this agent defined it.
        self.component: str | None = None
        self.owns_component = False
        #: With ``cache_session``: the session as this agent last read or wrote it.
        self.cached: Session | None = None
        self._define_lock: asyncio.Lock | None = None

    @property
    def sync_bridge(self) -> Bridge:
        bridge: Bridge = self.settings.runtime.sync_bridge
        return bridge

    # -- the storage component -----------------------------------------------------------------

    async def storage(self) -> str | None:
        """The storage component's name (defined on first use), or None without a db."""
        db, runtime = self.settings.db, self.settings.runtime
        if db is None:
            return None
        if isinstance(db, str):  # a storage component defined on the runtime already
            self.component = db
        if self.component is None:
            if self._define_lock is None:
                self._define_lock = asyncio.Lock()
            async with self._define_lock:
                if self.component is None:
                    name = component_name("db")
                    await runtime.adefine(db.component_type, name, db.attributes(runtime))
                    self.component, self.owns_component = name, True
        return self.component

    async def db_call(self, method: str, inputs: Any, result: type[T]) -> T:
        """A call of the storage component's ``method`` (defined on first use)."""
        storage = await self.storage()
        if storage is None:
            raise InvalidInputError(
                "this agent has no db: give it one, e.g. Agent(..., db=SqliteDb(db_file=...))",
                field="db",
            )
        data = await self.settings.runtime.acall_method(
            storage, method, converter.unstructure(inputs)
        )
        return converter.structure(data, result)

    def _sid(self, session_id: str | None) -> str:
        return session_id or self.settings.session_id

    async def _read(self, session_id: str | None, user_id: str | None = None) -> Session | None:
        """The stored session (``user_id``'s only, when given)."""
        stored = (
            await self.db_call("get_session", SessionRef(self._sid(session_id)), SessionResult)
        ).session
        if stored is not None and user_id is not None and stored.user_id != user_id:
            return None
        return stored

    # -- sessions (each written once, async; its sync twin derived with `blocking`) ---------

    @on_bridge_loop
    async def aget_session(
        self, session_id: str | None = None, user_id: str | None = None
    ) -> AgentSession | None:
        """The stored session (the agent's current one by default; ``user_id``'s only,
        when given) with its runs, or None."""
        stored = await self._read(session_id, user_id)
        if stored is None:
            return None
        runs = (await self.db_call("get_runs", GetRunsInput(stored.session_id), RunsResult)).runs
        return agno_session(stored, runs)

    get_session = blocking(aget_session)

    @property
    def cached_session(self) -> AgentSession | None:
        """With ``cache_session``: the session as this agent last read or wrote it."""
        return agno_session(self.cached) if self.cached is not None else None

    @on_bridge_loop
    async def asave_session(self, session: AgentSession) -> None:
        """Store ``session``'s name, state, summary and metadata (its runs are stored as
        they happen, not here)."""
        data = session.session_data or {}
        inputs = UpsertSessionInput(
            session.session_id,
            session.user_id,
            session.agent_id or self.settings.id,
            data.get("session_name"),
            dict(data.get("session_state") or {}),
            _kit_summary(session.summary),
            dict(session.metadata or {}),
        )
        saved = (await self.db_call("upsert_session", inputs, SessionResult)).session
        if self.settings.cache_session:
            self.cached = saved

    save_session = blocking(asave_session)

    @on_bridge_loop
    async def adelete_session(self, session_id: str, user_id: str | None = None) -> None:
        """Delete a stored session and its runs (``user_id``'s only, when given)."""
        if user_id is not None and await self._read(session_id, user_id) is None:
            return
        await self.db_call("delete_session", SessionRef(session_id), DeletedResult)
        if self.cached is not None and self.cached.session_id == session_id:
            self.cached = None

    delete_session = blocking(adelete_session)

    @on_bridge_loop
    async def afork_session(
        self, *, source_session_id: str | None = None, user_id: str | None = None
    ) -> str:
        """A new session with a copy of each run of ``source_session_id`` (default: the
        agent's; ``user_id``'s only, when given), its state, name, summary and metadata
        (``forked_from_session_id`` added), each run under a new id; its id. The new
        session belongs to ``user_id`` when given, else to the source's user."""
        source = await self._read(source_session_id, user_id)
        runs = []
        if source is not None:
            runs = (
                await self.db_call("get_runs", GetRunsInput(source.session_id), RunsResult)
            ).runs
        if source is None or not runs:
            raise InvalidInputError(
                "the source session has no runs to fork", field="source_session_id"
            )
        new_id = str(uuid.uuid4())
        owner = user_id or source.user_id
        for run in runs:
            metadata = {"forked_from_session_id": source.session_id, **run.metadata}
            copied = attrs.evolve(
                run, run_id=uuid.uuid4().hex, session_id=new_id, user_id=owner, metadata=metadata
            )
            await self.db_call("append_run", AppendRunInput(copied), AppendRunResult)
        metadata = {**source.metadata, "forked_from_session_id": source.session_id}
        inputs = UpsertSessionInput(
            new_id,
            owner,
            source.agent_id,
            source.name,
            copy.deepcopy(source.session_state),
            source.summary,
            metadata,
        )
        await self.db_call("upsert_session", inputs, SessionResult)
        return new_id

    fork_session = blocking(afork_session)

    # -- the session's name --------------------------------------------------------------------

    async def name_session(self, name: str, session_id: str | None) -> AgentSession:
        """Name the stored session (created if new, with the agent's state)."""
        sid = self._sid(session_id)
        stored = await self._read(sid)
        settings = self.settings
        if stored is None:
            state = dict(settings.session_state)
            inputs = UpsertSessionInput(sid, settings.user_id, settings.id, name, state)
        else:
            inputs = UpsertSessionInput(
                sid,
                stored.user_id,
                stored.agent_id,
                name,
                stored.session_state,
                stored.summary,
                stored.metadata,
            )
        saved = (await self.db_call("upsert_session", inputs, SessionResult)).session
        assert saved is not None  # upsert_session returns the session it stored
        if settings.cache_session:
            self.cached = saved
        return agno_session(saved)

    @on_bridge_loop
    async def aget_session_name(self, session_id: str | None = None) -> str:
        """The session's name ("" when it has none)."""
        stored = await self._read(session_id)
        if stored is None:
            raise InvalidInputError(
                f"no session {self._sid(session_id)!r} in this agent's db", field="session_id"
            )
        return stored.name or ""

    get_session_name = blocking(aget_session_name)

    @on_bridge_loop
    async def aset_session_name(
        self,
        session_id: str | None = None,
        autogenerate: bool = False,
        session_name: str | None = None,
    ) -> AgentSession:
        """Name the session ``session_name``, or (``autogenerate``) as the agent's model
        names its conversation (`generate_session_name`); the session, as stored."""
        if session_name is None and not autogenerate:
            raise InvalidInputError(
                "give session_name, or autogenerate=True for the model to name it",
                field="session_name",
            )
        if autogenerate:
            session = await self.aget_session(session_id)
            if session is None:
                raise InvalidInputError(
                    f"no session {self._sid(session_id)!r} to name", field="session_id"
                )
            session_name = await self.agenerate_session_name(session)
        assert session_name is not None
        return await self.name_session(session_name, session_id)

    set_session_name = blocking(aset_session_name)

    async def agenerate_session_name(self, session: AgentSession) -> str:
        """A name of at most 5 words for ``session``'s conversation, by the agent's model
        (asked again up to 3 times while its answer is empty or too long)."""
        lines = [
            f"{m.role.upper()}: {m.get_content_string()}"
            for m in session.get_messages(skip_roles=["system", "tool"])
        ]
        prompt = "Conversation\n" + "\n".join(lines) + "\n\nConversation name:"
        models = self.second_models()
        writer = models.new_agent(models.main(), system_message=NAME_INSTRUCTIONS)
        name = ""
        for _attempt in range(4):
            name = str(raise_failed(await writer.arun([KitMessage("user", prompt)])).content or "")
            name = name.replace('"', "").strip()
            if name and len(name.split()) <= 5:
                return name
        return " ".join(name.split()[:5]) or "New Session"

    def generate_session_name(self, session: AgentSession) -> str:
        """`agenerate_session_name`, waited for."""
        return self.sync_bridge.run(self.agenerate_session_name(session))

    # -- session state -------------------------------------------------------------------------

    @on_bridge_loop
    async def aget_session_state(self, session_id: str | None = None) -> dict[str, Any]:
        """The session's state: the stored one over the agent's ``session_state`` defaults
        (without a db, the agent's ``session_state`` itself)."""
        if self.settings.db is None:
            return self.settings.session_state
        stored = await self._read(session_id)
        return {
            **copy.deepcopy(self.settings.session_state),
            **(stored.session_state if stored else {}),
        }

    get_session_state = blocking(aget_session_state)

    @on_bridge_loop
    async def aupdate_session_state(
        self, session_state_updates: dict[str, Any], session_id: str | None = None
    ) -> str:
        """Merge ``session_state_updates`` into the session's state (top-level keys; the
        session is created if new) and say what it is now."""
        updates = session_state_updates
        if self.settings.db is None:
            self.settings.session_state.update(updates)
            state = self.settings.session_state
        else:
            sid = self._sid(session_id)
            stored = await self._read(sid)
            if stored is None:
                start = {**copy.deepcopy(self.settings.session_state), **updates}
                inputs = UpsertSessionInput(
                    sid, self.settings.user_id, self.settings.id, session_state=start
                )
                stored = (await self.db_call("upsert_session", inputs, SessionResult)).session
            else:
                inputs2 = UpdateSessionStateInput(sid, updates)
                stored = (
                    await self.db_call("update_session_state", inputs2, SessionResult)
                ).session
            assert stored is not None  # both methods return the session they changed
            state = stored.session_state
            if self.settings.cache_session:
                self.cached = stored
        return f"session state updated: {json.dumps(state, ensure_ascii=False, sort_keys=True)}"

    update_session_state = blocking(aupdate_session_state)

    # -- messages and runs ---------------------------------------------------------------------

    @on_bridge_loop
    async def aget_session_messages(
        self,
        session_id: str | None = None,
        last_n_runs: int | None = None,
        limit: int | None = None,
        skip_roles: Sequence[str] | None = None,
        skip_statuses: Sequence[Any] | None = None,
        skip_history_messages: bool = True,
    ) -> list[Message]:
        """The messages of the session's runs, oldest first, as Agno's `Message`: of the
        last ``last_n_runs`` runs, the last ``limit`` messages, without ``skip_roles`` and
        runs whose status is in ``skip_statuses`` (default: paused, cancelled, failed and
        regenerated runs); with ``skip_history_messages=False``, the history each run was given and
        stored (``store_history_messages``) before its own messages too."""
        statuses = [
            str(getattr(s, "value", s))
            for s in (SKIPPED_STATUSES if skip_statuses is None else skip_statuses)
        ]
        sid = self._sid(session_id)
        if skip_history_messages:
            inputs = GetMessagesInput(
                sid,
                last_n_runs,
                limit,
                list(skip_roles or ()),  # type: ignore[arg-type]
                statuses,  # type: ignore[arg-type]
            )
            found = (await self.db_call("get_messages", inputs, MessagesResult)).messages
            return [Message.from_kit(m) for m in found]
        runs_in = GetRunsInput(sid, last_n_runs, skip_statuses=statuses)  # type: ignore[arg-type]
        runs = (await self.db_call("get_runs", runs_in, RunsResult)).runs
        messages: list[KitMessage] = []
        for run in runs:
            history = converter.structure(run.metadata.get(HISTORY_KEY, []), list[KitMessage])
            messages += [*history, *run.messages]
        kept = [m for m in messages if m.role not in (skip_roles or ())]
        if limit is not None:
            kept = kept[-limit:]
        return [Message.from_kit(m) for m in kept]

    get_session_messages = blocking(aget_session_messages)

    @on_bridge_loop
    async def aget_chat_history(
        self, session_id: str | None = None, last_n_runs: int | None = None
    ) -> list[Message]:
        """The user's and the assistant's messages of the session, as Agno's `Message`
        (``m.role``, ``m.content``), oldest first, of runs of any status."""
        return await self.aget_session_messages(
            session_id, last_n_runs, skip_roles=["system", "tool"], skip_statuses=[]
        )

    get_chat_history = blocking(aget_chat_history)

    @on_bridge_loop
    async def aget_run_output(
        self, run_id: str, session_id: str | None = None, user_id: str | None = None
    ) -> RunOutput[Any] | None:
        """A stored run (of ``session_id`` and ``user_id`` only, when given) as a
        `RunOutput`, or None."""
        run = (await self.db_call("get_run", GetRunInput(run_id, session_id), RunResult)).run
        if run is None or (user_id is not None and run.user_id != user_id):
            return None
        return stored_output(run)

    get_run_output = blocking(aget_run_output)

    @on_bridge_loop
    async def aget_last_run_output(self, session_id: str | None = None) -> RunOutput[Any] | None:
        """The session's latest run, or None."""
        inputs = GetRunsInput(self._sid(session_id), last_n_runs=1)
        runs = (await self.db_call("get_runs", inputs, RunsResult)).runs
        return stored_output(runs[-1]) if runs else None

    get_last_run_output = blocking(aget_last_run_output)

    # -- the session's summary and metrics, the user's memories --------------------------------

    @on_bridge_loop
    async def aget_session_summary(self, session_id: str | None = None) -> SessionSummary | None:
        """The session's summary (None before one was written)."""
        stored = await self._read(session_id)
        if stored is None:
            raise InvalidInputError(
                f"no session {self._sid(session_id)!r} in this agent's db", field="session_id"
            )
        if stored.summary is None:
            return None
        summary = stored.summary
        return SessionSummary.from_dict(
            {"summary": summary.summary, "topics": summary.topics, "updated_at": summary.updated_at}
        )

    get_session_summary = blocking(aget_session_summary)

    @on_bridge_loop
    async def aget_session_metrics(self, session_id: str | None = None) -> SessionMetrics | None:
        """The session's tokens, summed over its runs, each model's share in ``details`` (None
        without a stored session)."""
        stored = await self._read(session_id)
        if stored is None:
            return None
        inputs = GetRunsInput(stored.session_id)
        metrics = SessionMetrics()
        for run in (await self.db_call("get_runs", inputs, RunsResult)).runs:
            metrics.accumulate_from_run(RunMetrics.from_dict(run.metrics))
        return metrics

    get_session_metrics = blocking(aget_session_metrics)

    @on_bridge_loop
    async def aget_user_memories(self, user_id: str | None = None) -> list[UserMemory]:
        """The user's memories, oldest first (the agent's user, else ``"default"``), as
        Agno's `UserMemory`."""
        from ..db.schemas.memory import UserMemory

        inputs = ListMemoriesInput(user_id or self.settings.user_id or DEFAULT_USER_ID)
        found = (await self.db_call("list_memories", inputs, MemoriesResult)).memories
        return [UserMemory.from_kit(m) for m in found]

    get_user_memories = blocking(aget_user_memories)

    async def close_storage(self) -> None:
        """Delete the storage component if this agent defined it."""
        if self.owns_component and self.component is not None:
            name, self.component, self.owns_component = self.component, None, False
            await self.settings.runtime.adelete(name)
