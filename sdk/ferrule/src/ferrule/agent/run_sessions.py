"""The two ends of an agent's every run in its session (`RunSessions`), over its storage
(`sessions.AgentSessions`): `begin` loads what the run starts from (the session's state,
its history, the user's memories, the session summary; a new session's ``introduction``
first), resolves the run's dependencies and builds the messages the model sees (the
system message, ``additional_input``, the history, and the run's own user message with
its placeholders filled, its knowledge references and its dependencies); `end` commits the
run, once, with only its own messages (what ``store_tool_messages``, ``store_media`` and
``store_history_messages`` say to keep), with the session's new state and summary in the
same transaction. A paused run is committed with what it needs to be continued, so that
`continue_run` works from another process.
"""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ferrule_kernel import get_logger
from ferrule_kit.content.messages import Message, ToolCall, converter
from ferrule_kit.errors import SessionStateConflictError
from ferrule_kit.stores.statemerge import merge_state
from ferrule_kit.stores.storage import (
    AppendRunInput,
    AppendRunResult,
    GetMessagesInput,
    GetRunInput,
    ListMemoriesInput,
    MemoriesResult,
    MessagesResult,
    Requirement,
    Run,
    RunResult,
    Session,
    SessionRef,
    SessionResult,
    SessionSummary,
)

from ..knowledge.document import MessageReferences
from ..metrics import RunMetrics
from .context import add_dependencies, fill_user_message, resolve_dependencies
from .deps import SecondModels
from .history import keep_last_tool_calls, without_media, without_tool_calls
from .inputs import DEFAULT_USER_ID, run_context_of
from .location import approximate_location
from .memory import MemoryManager, summarize, update_memories
from .rerun import DEFAULT_HISTORY_RUNS, Started, hide_replaced, start_rerun
from .response_file import save_response
from .results import RunOutput, ToolConfirmation
from .run_errors import UnknownRunError
from .sessions import AgentSessions
from .state import RunSession
from .stored import (
    EVENTS_KEY,
    FOLLOWUPS_KEY,
    HISTORY_KEY,
    LINEAGE_KEY,
    NOT_HISTORY,
    REFERENCES_KEY,
    RESUME_KEY,
    content_json,
    stored_references,
    user_metadata,
)
from .system_message import Known

if TYPE_CHECKING:
    from ..session.summary import SessionSummaryManager
    from ..tools.tool_context import RunContext
    from .sinks import Sink
    from .state import RunState

log = get_logger("ferrule.agent")

#: Tries to store a run whose session's state other writers keep changing (each conflict
#: means another writer's state landed: the store made progress).
STATE_WRITE_ATTEMPTS = 50


class RunSessionSettings(Protocol):
    """What `RunSessions` reads of its agent's settings, as they are at each run (the
    agent itself, which a dependency function is given as ``agent``)."""

    id: str
    runtime: Any
    session_state: dict[str, Any]
    add_location_to_context: bool
    overwrite_db_session_state: bool
    cache_session: bool
    introduction: str | None
    checkpoint: Literal["runs", "tool-batch", "tools"] | None
    add_history_to_context: bool
    num_history_runs: int | None
    num_history_messages: int | None
    max_tool_calls_from_history: int | None
    enable_session_summaries: bool
    add_session_summary_to_context: bool
    session_summary_manager: SessionSummaryManager | None
    memory_manager: MemoryManager | None
    enable_user_memories: bool
    add_memories_to_context: bool
    additional_input: Sequence[Any] | None
    build_user_context: bool
    resolve_in_context: bool
    add_dependencies_to_context: bool
    store_media: bool
    store_tool_messages: bool
    store_history_messages: bool
    name: str | None
    save_response_to_file: str | None


#: ``system(state, known, run_context, output)``: the run's system messages.
SystemMessages = Callable[..., list[Message]]


class RunKnowledge(Protocol):
    """The agent's knowledge as its runs use it (`retrieval.AgentKnowledge`)."""

    async def for_run(self, run_context: RunContext) -> Any:
        """The run's knowledge (a knowledge factory's, made for it), set on its context."""

    async def add_to_context(self, run: RunState, references: list[MessageReferences]) -> None:
        """The run's input searched, its references added."""


class RunSessions:
    """Begins and ends an agent's runs in their sessions (see the module docstring)."""

    def __init__(
        self,
        settings: RunSessionSettings,
        store: AgentSessions,
        second_models: Callable[[], SecondModels],
        system: SystemMessages,
        knowledge: RunKnowledge,
        extra_messages: Callable[[], list[Message]],
    ) -> None:
        self.settings = settings
        self.store = store
        self.second_models = second_models
        self.system = system
        self.knowledge = knowledge
        self.extra_messages = extra_messages
        #: The agent's location, once looked up (``add_location_to_context``).
        self.location: str | None = None

    async def begin(self, run: RunState) -> None:
        """Set up ``run``: the messages the model sees around its own, from its session."""
        context = run.session
        assert context is not None
        storage = await self.store.storage()
        if context.resume is not None:
            await self._load_paused(run, context)
            return
        if context.rerun is not None:
            await self._take_up(run, context, storage is not None)
        stored = await self.prepare(run)
        run_context = run_context_of(run)
        await self.knowledge.for_run(run_context)  # before its system message is written
        summary = stored.summary if stored is not None else None
        if context.rerun is not None:
            history = context.rerun.history
        else:
            history = await self._history(run, context, storage is not None)
        if storage is not None and self.settings.add_memories_to_context:
            inputs = ListMemoriesInput(context.user_id or DEFAULT_USER_ID)
            context.memories = (
                await self.store.db_call("list_memories", inputs, MemoriesResult)
            ).memories
        context.summary = summary
        prefix = [*self.extra_messages(), *history]
        # a history that brings its own system message keeps it first
        at = 1 if run.messages and run.messages[0].role == "system" else 0
        if not at:
            known = Known(
                context.memories if self.settings.add_memories_to_context else None,
                summary if self.settings.add_session_summary_to_context else None,
                run.flags.add_session_state_to_context,
                await self._location(),
            )
            system = self.system(context.session_state, known, run_context, run.output)
            prefix[0:0] = system
        run.messages[at:at] = prefix
        run.first_new += len(prefix)
        context.own = at + len(prefix)
        context.history = (context.own - len(history), context.own)
        await self._user_context(run, context)
        context.ready = True

    async def prepare(self, run: RunState) -> Session | None:
        """What ``run``'s hooks already see, before anything is stored: its session's
        state (a new session's ``introduction`` stored first) and its dependencies
        resolved; the stored session (None without a db or before its first run)."""
        context = run.session
        assert context is not None
        if context.prepared is not False:
            return context.prepared
        storage = await self.store.storage()
        stored = await self._stored_session(context) if storage is not None else None
        if storage is not None and stored is None and self.settings.introduction:
            stored = await self._introduce(context)
        context.session_state = self._state(context, stored, storage is not None)
        await resolve_dependencies(self.settings, run_context_of(run))
        context.prepared = stored
        return stored

    async def resolve_dependencies(self, run: RunState) -> None:
        """Call the functions among ``run``'s dependencies (a resumed run's, which
        `continue_run` may have given anew): each one's result takes its place."""
        await resolve_dependencies(self.settings, run_context_of(run))

    async def _location(self) -> str | None:
        """The agent's location (looked up once), with ``add_location_to_context``."""
        if self.settings.add_location_to_context and self.location is None:
            self.location = await approximate_location(self.settings.runtime)
        return self.location

    async def _stored_session(self, context: RunSession) -> Session | None:
        """The run's stored session: read, or (``cache_session``) the one this agent last
        read or wrote."""
        cached = self.store.cached
        if self.settings.cache_session and cached is not None:
            if cached.session_id == context.session_id:
                return cached
        ref = SessionRef(context.session_id)
        stored = (await self.store.db_call("get_session", ref, SessionResult)).session
        if self.settings.cache_session:
            self.store.cached = stored
        return stored

    async def _introduce(self, context: RunSession) -> Session:
        """A new session's first run: the agent's ``introduction``, as its reply."""
        introduction = self.settings.introduction
        assert introduction is not None
        run = Run(
            uuid.uuid4().hex,
            context.session_id,
            context.user_id,
            context.agent_id,
            "completed",
            messages=[Message("assistant", introduction)],
            content=introduction,
        )
        done = await self.store.db_call("append_run", AppendRunInput(run), AppendRunResult)
        if self.settings.cache_session:
            self.store.cached = done.session
        return done.session

    def _state(self, context: RunSession, stored: Session | None, kept: bool) -> dict[str, Any]:
        """The run's session state: the agent's defaults, the stored state over them
        (unless ``overwrite_db_session_state``), and the caller's ``session_state`` over
        both; without a db, the agent's own, across runs."""
        if not kept:
            state = self.settings.session_state  # kept on the agent, across runs
        else:
            state = copy.deepcopy(self.settings.session_state)
            if stored is not None:
                if not self.settings.overwrite_db_session_state:
                    state.update(stored.session_state)
                context.state_version = stored.state_version
            # what the run changes is its diff from what was stored
            context.state_base = copy.deepcopy(
                stored.session_state
                if stored is not None and self.settings.overwrite_db_session_state
                else state
            )
        state.update(context.state_updates or {})
        return state

    async def _history(self, run: RunState, context: RunSession, kept: bool) -> list[Message]:
        """The earlier messages the run sees: the session's last runs (``num_history_runs``,
        ``num_history_messages``; their newest ``max_tool_calls_from_history`` calls), or a
        `query` run's own conversation without a db."""
        settings = self.settings
        add = run.flags.add_history_to_context
        if kept and (add if add is not None else settings.add_history_to_context):
            runs = settings.num_history_runs
            if runs is None and settings.num_history_messages is None:
                runs = DEFAULT_HISTORY_RUNS
            inputs = GetMessagesInput(
                context.session_id, runs, settings.num_history_messages, ["system"], NOT_HISTORY
            )
            history = (await self.store.db_call("get_messages", inputs, MessagesResult)).messages
            if settings.max_tool_calls_from_history is not None:
                history = keep_last_tool_calls(history, settings.max_tool_calls_from_history)
            return history
        if run.kind.joins_conversation:
            return list(self.store.history)
        return []

    async def _take_up(self, run: RunState, context: RunSession, kept: bool) -> None:
        """A continued ended run (`rerun`): the earlier run's messages up to the boundary
        (and the new user message) as its own, and the history that run had."""
        settings, add = self.settings, run.flags.add_history_to_context
        history = {
            "add": add if add is not None else settings.add_history_to_context,
            "num_history_runs": settings.num_history_runs,
            "num_history_messages": settings.num_history_messages,
            "max_tool_calls_from_history": settings.max_tool_calls_from_history,
        }
        db_call = self.store.db_call if kept else None
        rerun = context.rerun
        started = await start_rerun(
            rerun, rerun.run_id, context.session_id, context.user_id, history, db_call
        )
        run.messages, run.first_new = started.messages, 0
        context.input, context.lineage, context.rerun = started.input, started.lineage, started

    async def _user_context(self, run: RunState, context: RunSession) -> None:
        """The run's own user message, as Agno builds it (``build_user_context``): its
        placeholders filled, then the knowledge's references, then the dependencies."""
        if not self.settings.build_user_context:
            return
        run_context = run_context_of(run)
        if self.settings.resolve_in_context:
            fill_user_message(run, run_context)
        await self.knowledge.add_to_context(run, context.references)
        flag = run.flags.add_dependencies_to_context
        if flag if flag is not None else self.settings.add_dependencies_to_context:
            add_dependencies(run, run_context.dependencies)

    async def _load_paused(self, run: RunState, context: RunSession) -> None:
        """Take up a paused run that another process stored."""
        assert context.resume is not None
        stored = (await self.store.db_call("get_run", GetRunInput(run.id), RunResult)).run
        if stored is None or stored.status != "paused" or RESUME_KEY not in stored.metadata:
            raise UnknownRunError(f"no paused run {run.id!r} in this agent's db", run_id=run.id)
        resume = stored.metadata[RESUME_KEY]
        requirements = [ToolConfirmation(r.tool_call) for r in stored.requirements]
        context.resume.apply(requirements)  # before anything changes: a bad call keeps it paused
        ref = SessionRef(stored.session_id)
        session = (await self.store.db_call("get_session", ref, SessionResult)).session
        context.session_id, context.user_id = stored.session_id, stored.user_id
        stored_state = session.session_state if session is not None else {}
        context.session_state = {**copy.deepcopy(self.settings.session_state), **stored_state}
        context.state_base = copy.deepcopy(context.session_state)
        context.state_version = session.state_version if session is not None else 0
        context.input = stored.input
        context.metadata = user_metadata(stored.metadata)
        context.references = stored_references(stored.metadata)
        prefix = converter.structure(resume["context"], list[Message])
        run.messages = [*prefix, *stored.messages]
        context.own = len(prefix)
        run.first_new = len(prefix) + resume["first_new"]
        run.pending = converter.structure(resume["pending"], list[ToolCall])
        run.requirements = requirements
        run.tool_calls_made = resume["tool_calls_made"]
        run.elapsed = resume["elapsed"]
        run.executions = list(stored.tool_calls)
        run.metrics = RunMetrics.from_dict(stored.metrics)
        context.ready = True

    async def end(self, run: RunState, sink: Sink | None = None) -> None:
        """Finish ``run`` in its session: on completion, the user's memories and the
        session's summary (each step told to ``sink``); then commit it (with a db)."""
        context = run.session
        if context is None or not context.ready:
            return
        summary = None
        if run.status == "completed":
            if self.settings.enable_user_memories:
                if sink is not None:
                    sink.memory_started()
                await update_memories(self.second_models(), self.settings.memory_manager, run)
                if sink is not None and sink.steps:
                    user = ListMemoriesInput(context.user_id or DEFAULT_USER_ID)
                    found = await self.second_models().db("list_memories", user, MemoriesResult)
                    sink.memory_completed(list(found.memories))
            if self.settings.enable_session_summaries:
                if sink is not None:
                    sink.summary_started()
                manager = self.settings.session_summary_manager
                summary = await summarize(self.second_models(), run, manager)
                if sink is not None:
                    sink.summary_completed(summary)
            if self.settings.save_response_to_file is not None:
                output = run.to_output()
                self.save_run_response_to_file(
                    output, run.input, context.session_id, context.user_id
                )
        if self.store.component is None:
            return
        await self._append_run(self._stored_run(run, context), context, summary)
        started = context.rerun
        if (
            isinstance(started, Started)
            and started.replaces
            and run.status in ("completed", "paused")
        ):
            # a regenerated run, stored: the run it replaces is no longer history
            await hide_replaced(started.replaces, context.session_id, self.store.db_call)

    async def checkpoint(self, run: RunState) -> None:
        """Agno 2.9's ``checkpoint="tool-batch"``: after each batch of tool calls, the run
        as far as it went (its calls and their results) written to the db as ``running``
        (the session's state is written at its end), so that a run cut short (a crash) can
        be taken up again (`Agent.continue_run` with ``fork=True`` or ``input``)."""
        context = run.session
        if self.settings.checkpoint != "tool-batch" or context is None or not context.ready:
            return
        if self.store.component is None:
            return
        context.lineage["last_checkpoint_at_message_index"] = len(run.messages) - context.own
        stored = self._stored_run(run, context)
        await self.store.db_call("append_run", AppendRunInput(stored), AppendRunResult)

    def _stored_run(self, run: RunState, context: RunSession) -> Run:
        """``run`` as the db keeps it, its duration so far set."""
        elapsed = run.elapsed + time.perf_counter() - run.started
        run.metrics.duration = elapsed
        return Run(
            run.id,
            context.session_id,
            context.user_id,
            context.agent_id,
            run.status,
            context.input,
            self._kept_messages(run, context),
            list(run.executions),
            [
                Requirement(r.tool_call, "confirmation", r.confirmed, r.reason)
                for r in (run.requirements if run.status == "paused" else ())
            ],
            run.metrics.to_dict(),
            content_json(run.content),
            context.content_type,
            run.error.to_dict() if run.error is not None else None,
            self._stored_metadata(run, context, elapsed),
        )

    def _kept_messages(self, run: RunState, context: RunSession) -> list[Message]:
        """The run's own messages as stored: a paused run's all (it goes on from them),
        else what ``store_tool_messages`` and ``store_media`` say to keep."""
        messages = [m for m in run.messages[context.own :] if m.role != "system"]
        if run.status == "paused":
            return messages
        if not self.settings.store_tool_messages:
            messages = without_tool_calls(messages)
        if not self.settings.store_media:
            messages = without_media(messages)
        return messages

    def _stored_metadata(
        self, run: RunState, context: RunSession, elapsed: float
    ) -> dict[str, Any]:
        """The stored run's metadata: the caller's, and what ferrule keeps there (a paused
        run's resumption, the knowledge searches, the history with
        ``store_history_messages``)."""
        metadata = dict(context.metadata)
        if run.status == "paused":
            prefix = run.messages[: context.own]
            metadata[RESUME_KEY] = {
                "context": converter.unstructure(prefix, list[Message]),
                "first_new": run.first_new - context.own,
                "pending": converter.unstructure(run.pending, list[ToolCall]),
                "tool_calls_made": run.tool_calls_made,
                "elapsed": elapsed,
            }
        if context.references:
            metadata[REFERENCES_KEY] = converter.unstructure(context.references)
        if run.followups is not None:
            metadata[FOLLOWUPS_KEY] = run.followups
        if run.events is not None:
            metadata[EVENTS_KEY] = [event.to_dict() for event in run.events]
        if context.lineage:
            metadata[LINEAGE_KEY] = context.lineage
        start, stop = context.history
        if self.settings.store_history_messages and stop > start:
            history = run.messages[start:stop]
            if not self.settings.store_media:
                history = without_media(history)
            metadata[HISTORY_KEY] = converter.unstructure(history, list[Message])
        return metadata

    async def _append_run(
        self, run: Run, context: RunSession, summary: SessionSummary | None
    ) -> None:
        """Store ``run`` with its session's state, compare-and-set: if another writer (a
        process, a concurrent run) changed the state since this run read it, the run's
        change is re-applied to theirs (`merge_state`) and the append tried again."""
        state, version = context.session_state, context.state_version
        for _attempt in range(STATE_WRITE_ATTEMPTS):
            inputs = AppendRunInput(run, state, summary, version)
            try:
                done = await self.store.db_call("append_run", inputs, AppendRunResult)
            except SessionStateConflictError:
                ref = SessionRef(run.session_id)
                theirs = (await self.store.db_call("get_session", ref, SessionResult)).session
                version = theirs.state_version if theirs is not None else 0
                current = theirs.session_state if theirs is not None else {}
                state = merge_state(context.state_base, context.session_state, current)
                continue
            context.session_state = state
            if self.settings.cache_session:
                self.store.cached = done.session
            return
        raise SessionStateConflictError(
            f"the state of session {run.session_id!r} kept changing under this run: "
            f"not stored after {STATE_WRITE_ATTEMPTS} attempts",
            session_id=run.session_id,
        )

    async def store_pending(self, output: RunOutput[Any]) -> None:
        """Store a background run as pending, before it starts (its end replaces it)."""
        session_id = output.session_id or ""
        pending = Run(output.run_id, session_id, output.user_id, output.agent_id, "pending")
        await self.store.db_call("append_run", AppendRunInput(pending), AppendRunResult)

    def save_run_response_to_file(
        self,
        run_response: RunOutput[Any],
        input: Any = None,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> None:
        """``run_response``'s content written to the file the agent's
        ``save_response_to_file`` names (`response_file`; nothing without one), its
        ``{message}`` ``input`` when that is text."""
        values = {
            "name": self.settings.name,
            "session_id": session_id,
            "user_id": user_id,
            "message": input,
            "run_id": run_response.run_id,
        }
        save_response(self.settings.save_response_to_file, run_response.content, values)

    async def end_quietly(self, run: RunState) -> None:
        """`end` for a run that failed already: a failure to store it is only logged."""
        try:
            await self.end(run)
        except Exception as exc:
            log.warning("run_not_stored", run_id=run.id, error=repr(exc))
