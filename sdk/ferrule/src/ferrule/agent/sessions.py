"""Sessions: what an `Agent` with a ``db`` keeps between runs and processes.

`AgentSessions`, the collaborator of `Agent` that talks to its storage component (the
contract of `ferrule_kit.storage`, reached through the runtime, so it works in-process and
over ``ferrule serve`` alike): the Agent reference's session methods (`get_session`,
`get_session_state`, `get_session_messages`, ...), and the two ends of every run:
`begin` loads what the run starts from (the session's state, its history, the user's
memories, the session summary) and builds the messages the model sees; `end` commits the
run, once, with only its own messages (not the history it was given), with the session's
new state and summary in the same transaction. A paused run is committed with what it
needs to be continued, so that `continue_run` works from another process.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs
from ferrule_kernel import InvalidInputError, error_from_dict, get_logger
from ferrule_kit.errors import SessionStateConflictError
from ferrule_kit.messages import Message, ToolCall, converter
from ferrule_kit.statemerge import merge_state
from ferrule_kit.storage import (
    AppendRunInput,
    AppendRunResult,
    DeletedResult,
    GetMessagesInput,
    GetRunInput,
    GetRunsInput,
    ListMemoriesInput,
    MemoriesResult,
    MessagesResult,
    Requirement,
    Run,
    RunResult,
    RunsResult,
    RunStatus,
    SessionRef,
    SessionResult,
    SessionSummary,
    UpdateSessionStateInput,
    UpsertSessionInput,
    UserMemory,
)

from .._bridge import Bridge, blocking, on_bridge_loop
from ..knowledge.document import MessageReferences
from .deps import SecondModels
from .inputs import DEFAULT_USER_ID, run_context_of
from .langmodel import component_name
from .memory import MemoryManager, summarize, update_memories
from .results import RunMetrics, RunOutput, ToolConfirmation
from .run_errors import UnknownRunError
from .state import RunSession

if TYPE_CHECKING:
    from .state import RunState

log = get_logger("ferrule.agent")
T = TypeVar("T")

#: The history window when the agent sets neither ``num_history_runs`` nor
#: ``num_history_messages`` (Agno's default).
DEFAULT_HISTORY_RUNS = 3
#: Runs that are not history: unfinished, failed or stopped.
_NOT_HISTORY: list[RunStatus] = ["pending", "running", "paused", "error", "cancelled"]
#: Where a paused run's stored metadata keeps what continuing it needs.
_RESUME_KEY = "ferrule.resume"
#: Where a run's stored metadata keeps its knowledge searches (`RunOutput.references`).
_REFERENCES_KEY = "ferrule.references"
_RESERVED_KEYS = (_RESUME_KEY, _REFERENCES_KEY)
#: Tries to store a run whose session's state other writers keep changing (each conflict
#: means another writer's state landed: the store made progress).
_STATE_WRITE_ATTEMPTS = 50


def _user_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """A stored run's metadata without what ferrule keeps there."""
    return {k: v for k, v in metadata.items() if k not in _RESERVED_KEYS}


def _stored_references(metadata: dict[str, Any]) -> list[MessageReferences]:
    return converter.structure(metadata.get(_REFERENCES_KEY, []), list[MessageReferences])


@attrs.define
class AgentSession:
    """A stored session (the Agent reference's ``AgentSession``): its ids, name, state,
    summary and metadata, and its runs when loaded with them (`Agent.get_session`)."""

    session_id: str
    agent_id: str | None = None
    user_id: str | None = None
    name: str | None = None
    session_state: dict[str, Any] = attrs.Factory(dict)
    summary: SessionSummary | None = None
    metadata: dict[str, Any] = attrs.Factory(dict)
    runs: list[RunOutput[Any]] | None = None
    created_at: float | None = None
    updated_at: float | None = None

    @property
    def session_data(self) -> dict[str, Any]:
        """Agno's view of the name and state."""
        return {"session_name": self.name, "session_state": self.session_state}


def _content_json(content: Any) -> Any:
    """A run's content as JSON for the store (an output schema's object unstructured)."""
    if hasattr(content, "model_dump") and not isinstance(content, type):
        return content.model_dump(mode="json")
    if attrs.has(type(content)):
        return converter.unstructure(content)
    return content


def stored_output(run: Run) -> RunOutput[Any]:
    """A stored run as a `RunOutput` (structured content comes back as JSON)."""
    references = _stored_references(run.metadata)
    return RunOutput(
        run.run_id,
        run.status,  # type: ignore[arg-type]  # the agent stores no "pending" run
        run.content,
        list(run.messages),
        converter.structure(run.metrics, RunMetrics) if run.metrics else RunMetrics(),
        [ToolConfirmation(r.tool_call, r.confirmed, r.reason) for r in run.requirements],
        error_from_dict(run.error) if run.error else None,
        agent_id=run.agent_id,
        session_id=run.session_id,
        user_id=run.user_id,
        content_type=run.content_type or "str",
        metadata=_user_metadata(run.metadata),
        references=references or None,
    )


def _session(stored: Any, runs: list[RunOutput[Any]] | None = None) -> AgentSession:
    return AgentSession(
        stored.session_id,
        stored.agent_id,
        stored.user_id,
        stored.name,
        stored.session_state,
        stored.summary,
        stored.metadata,
        runs,
        stored.created_at,
        stored.updated_at,
    )


class AgentSessionView(Protocol):
    """What `AgentSessions` reads of its agent's settings, as they are at each call (Agno's
    users set them on the agent: ``agent.session_id = ...``)."""

    runtime: Any
    db: Any
    id: str
    session_id: str
    user_id: str | None
    session_state: dict[str, Any]
    add_history_to_context: bool
    num_history_runs: int | None
    num_history_messages: int | None
    enable_session_summaries: bool
    add_session_summary_to_context: bool
    memory_manager: MemoryManager | None
    enable_user_memories: bool
    add_memories_to_context: bool


class AgentSessions:
    """Sessions, state, history and memories of an `Agent` (see the module docstring), over
    what the agent gives it: its settings, its own conversation (a `query` run without a
    db starts from it), how its second models run (`SecondModels`), how its system message
    is made, and how a run's input is searched in its knowledge (`AgentKnowledge`)."""

    #: The name its sync twins' errors give (they are `Agent`'s methods to users).
    shown_as = "Agent"

    def __init__(
        self,
        settings: AgentSessionView,
        history: list[Message],
        second_models: Callable[[], SecondModels],
        system_message: Callable[..., str | None],
        knowledge_context: Callable[[RunState, list[MessageReferences]], Awaitable[None]],
    ) -> None:
        self.settings = settings
        self.history = history
        self.second_models = second_models
        self.system_message = system_message
        self.knowledge_context = knowledge_context
        #: The storage component's name once defined, and whether this agent defined it.
        self.component: str | None = None
        self.owns_component = False
        self._define_lock: asyncio.Lock | None = None

    @property
    def sync_bridge(self) -> Bridge:
        bridge: Bridge = self.settings.runtime.sync_bridge
        return bridge

    # -- the storage component -----------------------------------------------------------------

    async def _storage(self) -> str | None:
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
        storage = await self._storage()
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

    # -- sessions (each written once, async; its sync twin derived with `blocking`) ---------

    @on_bridge_loop
    async def aget_session(self, session_id: str | None = None) -> AgentSession | None:
        """The stored session (the agent's current one by default) with its runs, or None."""
        sid = self._sid(session_id)
        stored = (await self.db_call("get_session", SessionRef(sid), SessionResult)).session
        if stored is None:
            return None
        runs = (await self.db_call("get_runs", GetRunsInput(sid), RunsResult)).runs
        return _session(stored, [stored_output(r) for r in runs])

    get_session = blocking(aget_session)

    @on_bridge_loop
    async def asave_session(self, session: AgentSession) -> None:
        """Store ``session``'s fields (its runs are stored as they happen, not here)."""
        inputs = UpsertSessionInput(
            session.session_id,
            session.user_id,
            session.agent_id or self.settings.id,
            session.name,
            session.session_state,
            session.summary,
            session.metadata,
        )
        await self.db_call("upsert_session", inputs, SessionResult)

    save_session = blocking(asave_session)

    @on_bridge_loop
    async def adelete_session(self, session_id: str) -> None:
        """Delete a stored session and its runs."""
        await self.db_call("delete_session", SessionRef(session_id), DeletedResult)

    delete_session = blocking(adelete_session)

    async def name_session(self, name: str, session_id: str | None) -> None:
        """Name the stored session (created if new): `Agent.arename`'s storage half."""
        sid = self._sid(session_id)
        stored = (await self.db_call("get_session", SessionRef(sid), SessionResult)).session
        if stored is None:
            settings = self.settings
            state = dict(settings.session_state)
            session = AgentSession(sid, settings.id, settings.user_id, name, state)
        else:
            session = attrs.evolve(_session(stored), name=name)
        await self.asave_session(session)

    # -- session state -------------------------------------------------------------------------

    @on_bridge_loop
    async def aget_session_state(self, session_id: str | None = None) -> dict[str, Any]:
        """The session's state: the stored one over the agent's ``session_state`` defaults
        (without a db, the agent's ``session_state`` itself)."""
        if self.settings.db is None:
            return self.settings.session_state
        sid = self._sid(session_id)
        stored = (await self.db_call("get_session", SessionRef(sid), SessionResult)).session
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
            stored = (await self.db_call("get_session", SessionRef(sid), SessionResult)).session
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
        skip_statuses: Sequence[str] | None = None,
    ) -> list[Message]:
        """The messages of the session's runs, oldest first: of the last ``last_n_runs``
        runs, the last ``limit`` messages, without ``skip_roles`` and runs whose status is
        in ``skip_statuses``."""
        inputs = GetMessagesInput(
            self._sid(session_id),
            last_n_runs,
            limit,
            list(skip_roles or ()),  # type: ignore[arg-type]
            list(skip_statuses or ()),  # type: ignore[arg-type]
        )
        return (await self.db_call("get_messages", inputs, MessagesResult)).messages

    get_session_messages = blocking(aget_session_messages)

    async def aget_chat_history(
        self, session_id: str | None = None, last_n_runs: int | None = None
    ) -> list[Message]:
        """The user and assistant messages of the session (no system or tool messages)."""
        return await self.aget_session_messages(
            session_id, last_n_runs, skip_roles=["system", "tool"]
        )

    get_chat_history = blocking(aget_chat_history)

    @on_bridge_loop
    async def aget_run_output(
        self, run_id: str, session_id: str | None = None
    ) -> RunOutput[Any] | None:
        """A stored run (of ``session_id`` only, when given) as a `RunOutput`, or None."""
        run = (await self.db_call("get_run", GetRunInput(run_id, session_id), RunResult)).run
        return None if run is None else stored_output(run)

    get_run_output = blocking(aget_run_output)

    @on_bridge_loop
    async def aget_last_run_output(self, session_id: str | None = None) -> RunOutput[Any] | None:
        """The session's latest run, or None."""
        inputs = GetRunsInput(self._sid(session_id), last_n_runs=1)
        runs = (await self.db_call("get_runs", inputs, RunsResult)).runs
        return stored_output(runs[-1]) if runs else None

    get_last_run_output = blocking(aget_last_run_output)

    # -- memories ------------------------------------------------------------------------------

    @on_bridge_loop
    async def aget_user_memories(self, user_id: str | None = None) -> list[UserMemory]:
        """The user's memories, oldest first (the agent's user, else ``"default"``)."""
        inputs = ListMemoriesInput(user_id or self.settings.user_id or DEFAULT_USER_ID)
        return (await self.db_call("list_memories", inputs, MemoriesResult)).memories

    get_user_memories = blocking(aget_user_memories)

    # -- a run's two ends ----------------------------------------------------------------------

    async def begin(self, run: RunState) -> None:
        """Set up ``run``: the messages the model sees around its own, from its session."""
        context = run.session
        assert context is not None
        storage = await self._storage()
        if context.resume is not None:
            await self._load_paused(run, context)
            return
        summary = None
        if storage is None:
            state = self.settings.session_state  # kept on the agent, across runs
        else:
            stored = (
                await self.db_call("get_session", SessionRef(context.session_id), SessionResult)
            ).session
            state = copy.deepcopy(self.settings.session_state)
            if stored is not None:
                state.update(stored.session_state)
                summary = stored.summary
                context.state_version = stored.state_version
            context.state_base = copy.deepcopy(state)
        state.update(context.state_updates or {})
        context.session_state = state
        history: list[Message] = []
        if storage is not None and self.settings.add_history_to_context:
            runs = self.settings.num_history_runs
            if runs is None and self.settings.num_history_messages is None:
                runs = DEFAULT_HISTORY_RUNS
            inputs = GetMessagesInput(
                context.session_id,
                runs,
                self.settings.num_history_messages,
                ["system"],
                _NOT_HISTORY,
            )
            history = (await self.db_call("get_messages", inputs, MessagesResult)).messages
        elif run.kind.joins_conversation:
            history = list(self.history)
        if storage is not None and self.settings.add_memories_to_context:
            inputs2 = ListMemoriesInput(context.user_id or DEFAULT_USER_ID)
            context.memories = (
                await self.db_call("list_memories", inputs2, MemoriesResult)
            ).memories
        context.summary = summary
        prefix = list(history)
        # a history that brings its own system message keeps it first
        at = 1 if run.messages and run.messages[0].role == "system" else 0
        if not at:
            shown = summary if self.settings.add_session_summary_to_context else None
            system = self.system_message(
                state, context.memories, shown, run_context_of(run), run.output
            )
            if system:
                prefix.insert(0, Message("system", system))
        run.messages[at:at] = prefix
        run.first_new += len(prefix)
        context.own = at + len(prefix)
        await self.knowledge_context(run, context.references)
        context.ready = True

    async def _load_paused(self, run: RunState, context: RunSession) -> None:
        """Take up a paused run that another process stored."""
        assert context.resume is not None
        stored = (await self.db_call("get_run", GetRunInput(run.id), RunResult)).run
        if stored is None or stored.status != "paused" or _RESUME_KEY not in stored.metadata:
            raise UnknownRunError(f"no paused run {run.id!r} in this agent's db", run_id=run.id)
        resume = stored.metadata[_RESUME_KEY]
        requirements = [ToolConfirmation(r.tool_call) for r in stored.requirements]
        context.resume.apply(requirements)  # before anything changes: a bad call keeps it paused
        session = (
            await self.db_call("get_session", SessionRef(stored.session_id), SessionResult)
        ).session
        context.session_id, context.user_id = stored.session_id, stored.user_id
        stored_state = session.session_state if session is not None else {}
        context.session_state = {**copy.deepcopy(self.settings.session_state), **stored_state}
        context.state_base = copy.deepcopy(context.session_state)
        context.state_version = session.state_version if session is not None else 0
        context.input = stored.input
        context.metadata = _user_metadata(stored.metadata)
        context.references = _stored_references(stored.metadata)
        prefix = converter.structure(resume["context"], list[Message])
        run.messages = [*prefix, *stored.messages]
        context.own = len(prefix)
        run.first_new = len(prefix) + resume["first_new"]
        run.pending = converter.structure(resume["pending"], list[ToolCall])
        run.requirements = requirements
        run.tool_calls_made = resume["tool_calls_made"]
        run.elapsed = resume["elapsed"]
        run.executions = list(stored.tool_calls)
        run.metrics = converter.structure(stored.metrics, RunMetrics)
        context.ready = True

    async def end(self, run: RunState) -> None:
        """Finish ``run`` in its session: on completion, the user's memories and the
        session's summary; then commit it (with a db)."""
        context = run.session
        if context is None or not context.ready:
            return
        summary = None
        if run.status == "completed":
            if self.settings.enable_user_memories:
                await update_memories(self.second_models(), self.settings.memory_manager, run)
            if self.settings.enable_session_summaries:
                summary = await summarize(self.second_models(), run)
        if self.component is None:
            return
        metadata = dict(context.metadata)
        elapsed = run.elapsed + time.perf_counter() - run.started
        if run.status == "paused":
            prefix = run.messages[: context.own]
            metadata[_RESUME_KEY] = {
                "context": converter.unstructure(prefix, list[Message]),
                "first_new": run.first_new - context.own,
                "pending": converter.unstructure(run.pending, list[ToolCall]),
                "tool_calls_made": run.tool_calls_made,
                "elapsed": elapsed,
            }
        if context.references:
            metadata[_REFERENCES_KEY] = converter.unstructure(context.references)
        run.metrics.duration = elapsed
        stored = Run(
            run.id,
            context.session_id,
            context.user_id,
            context.agent_id,
            run.status,
            context.input,
            [m for m in run.messages[context.own :] if m.role != "system"],
            list(run.executions),
            [
                Requirement(r.tool_call, "confirmation", r.confirmed, r.reason)
                for r in (run.requirements if run.status == "paused" else ())
            ],
            converter.unstructure(run.metrics),
            _content_json(run.content),
            context.content_type,
            run.error.to_dict() if run.error is not None else None,
            metadata,
        )
        await self._append_run(stored, context, summary)

    async def _append_run(
        self, run: Run, context: RunSession, summary: SessionSummary | None
    ) -> None:
        """Store ``run`` with its session's state, compare-and-set: if another writer (a
        process, a concurrent run) changed the state since this run read it, the run's
        change is re-applied to theirs (`merge_state`) and the append tried again."""
        state, version = context.session_state, context.state_version
        for _attempt in range(_STATE_WRITE_ATTEMPTS):
            inputs = AppendRunInput(run, state, summary, version)
            try:
                await self.db_call("append_run", inputs, AppendRunResult)
            except SessionStateConflictError:
                ref = SessionRef(run.session_id)
                theirs = (await self.db_call("get_session", ref, SessionResult)).session
                version = theirs.state_version if theirs is not None else 0
                current = theirs.session_state if theirs is not None else {}
                state = merge_state(context.state_base, context.session_state, current)
                continue
            context.session_state = state
            return
        raise SessionStateConflictError(
            f"the state of session {run.session_id!r} kept changing under this run: "
            f"not stored after {_STATE_WRITE_ATTEMPTS} attempts",
            session_id=run.session_id,
        )

    async def end_quietly(self, run: RunState) -> None:
        """`end` for a run that failed already: a failure to store it is only logged."""
        try:
            await self.end(run)
        except Exception as exc:
            log.warning("run_not_stored", run_id=run.id, error=repr(exc))

    async def close_storage(self) -> None:
        """Delete the storage component if this agent defined it."""
        if self.owns_component and self.component is not None:
            name, self.component, self.owns_component = self.component, None, False
            await self.settings.runtime.adelete(name)
