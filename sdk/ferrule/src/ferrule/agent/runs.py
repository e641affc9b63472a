"""How requests become runs (`AgentRuns`): each `RunRequest` (built by the calls of
`run_calls.RunCalls`) makes a `RunState` with its session context (`RunSession`) and the
`AgentStream` its caller reads, through the sink its call reads with; `loop.drive` runs
it. A `Continuation` resumes a paused run.

What `Agent.run` is depends on how the agent was built, decided once (`RunStyle`), never
by the type of the input:

- `AgnoRun` (``Agent(model=...)``, ``Agent(model)``, Ailoy 0.1's ``Agent(runtime,
  model)``): Agno's ``run(input)``: one input, and the `RunOutput` back
  (``agent.run("Hi").content``), or typed events with ``stream=True``.
- `AiloyRun` (Ailoy 0.2's ``Agent(lm)``, a `LangModel` given first): Ailoy's
  ``run(messages, config=None)``: the whole conversation (a string is one user message),
  streaming one `MessageOutput` per new message (``async for resp in agent.run(...)``).

Each names the other's way when it is misused. `Agent.arun`, `query`, `run_delta` and
`run_sync` are the same on both.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import attrs
from ferrule_kit.models.lm import Reasoning
from typing_extensions import TypeVar

from .background import BackgroundRun, background_events, needs_db
from .context import effective_filters, merged_dependencies, merged_metadata
from .failed_runs import run_output
from .input_schema import validated_input
from .output_schema import StructuredOutput, structured_output
from .request import INPUT, MESSAGES, QUERY, Continuation, RunKind, RunRequest
from .results import RunOutput
from .run_errors import UnknownRunError
from .sinks import (
    ContentEventSink,
    DeltaSink,
    EventSink,
    MessageSink,
    ResponseSink,
    SilentReasoningSink,
    Sink,
)
from .state import RunFlags, RunSession, RunState
from .stream import AgentStream, Launch
from .usage import UsageLimits


class RunDefaults(Protocol):
    """What `AgentRuns` reads of its agent's settings, as they are at each call: a call's
    own arguments go over them."""

    id: str
    db: Any
    session_id: str
    user_id: str | None
    stream: bool | None
    stream_events: bool | None
    reasoning: Reasoning
    output_schema: Any
    tool_call_limit: int | None
    usage_limits: UsageLimits | None
    dependencies: dict[str, Any] | None
    metadata: dict[str, Any] | None
    knowledge_filters: Any
    input_schema: Any
    send_media_to_model: bool
    store_events: bool
    events_to_skip: list[Any]


class AgentRuns:
    """Makes an agent's runs and their streams (see the module docstring), over its
    settings (`RunDefaults`), its output schema, its table of running runs (where a paused
    run waits for `continue_run`) and how its streams start their runs (`Launch`)."""

    def __init__(
        self,
        defaults: RunDefaults,
        output: StructuredOutput | None,
        running: dict[str, RunState],
        launch: Callable[[], Launch],
        store_pending: Callable[[RunOutput[Any]], Awaitable[None]],
    ) -> None:
        self.defaults = defaults
        self.output = output
        self.running = running
        self.launch = launch
        self.store_pending = store_pending
        #: The agent's background runs' tasks, held until each ends (`background`).
        self.background_tasks: set[asyncio.Task[Any]] = set()

    def start(self, request: RunRequest) -> AgentStream[Any, Any]:
        """The stream of a new run of ``request``."""
        stream: AgentStream[Any, Any] = AgentStream(
            self.launch(), self.new_run(request), self.sink_for(request)
        )
        stream.yield_run_output = bool(request.yield_run_output)
        return stream

    def start_background(self, request: RunRequest) -> Any:
        """A background run of ``request`` (`background`): awaited, its pending
        `RunOutput`; with ``stream``, its events."""
        needs_db(self.defaults.db)
        return self.in_background(self.start(request), self.streams(request))

    def in_background(self, stream: AgentStream[Any, Any], events: bool) -> Any:
        """``stream``'s run in the background (`background`): awaited, its pending
        `RunOutput`; with ``events``, its events."""
        needs_db(self.defaults.db)
        if events:
            return background_events(stream, self.background_tasks)
        return BackgroundRun(stream, self.store_pending, self.background_tasks)

    def new_run(self, request: RunRequest) -> RunState:
        """A run of ``request``; each option it leaves None is the agent's."""
        defaults, kind = self.defaults, request.kind
        given = request.run_context
        content = request.input
        if kind is INPUT and defaults.input_schema is not None:
            content = validated_input(content, defaults.input_schema)
        files = request.files if defaults.send_media_to_model else ()
        messages = kind.messages(content, files)
        infer_options: dict[str, Any] = {}
        reasoning = request.reasoning
        config = request.config
        if config is not None and config.inference is not None:
            infer_options = config.inference.infer_options()
            reasoning = infer_options.pop("reasoning", reasoning)
        output_schema = request.output_schema
        context = self.context(request.session_id, request.user_id, request)
        schema = defaults.output_schema if output_schema is None else output_schema
        if schema is not None:
            context.content_type = schema.__name__ if isinstance(schema, type) else "dict"
        tool_call_limit = request.tool_call_limit
        usage_limits = request.usage_limits
        run = RunState(
            request.run_id or (given.run_id if given is not None else None) or uuid.uuid4().hex,
            kind,
            messages,
            kind.first_new(messages),
            defaults.reasoning if reasoning is None else reasoning,
            self.output if output_schema is None else structured_output(output_schema),
            defaults.tool_call_limit if tool_call_limit is None else tool_call_limit,
            session=context,
            usage_limits=defaults.usage_limits if usage_limits is None else usage_limits,
            tool_deps=request.deps,
            input=content,
            files=request.files,
            infer_options=infer_options,
            config=config,
        )
        self.add_context(run, request)
        if defaults.store_events:
            skipped = (getattr(e, "value", e) for e in defaults.events_to_skip or ())
            run.events_skipped = frozenset(skipped)
        return run

    def add_context(self, run: RunState, request: RunRequest) -> None:
        """What ``run`` knows besides its messages (Agno's): the dependencies, knowledge
        filters and metadata of the call (else of its ``run_context``) over the agent's, its
        own context switches, the caller's `RunContext` and the hooks' other keywords."""
        given = request.run_context
        defaults = self.defaults
        dependencies = request.dependencies
        filters = request.knowledge_filters
        if given is not None:
            dependencies = given.dependencies if dependencies is None else dependencies
            filters = given.knowledge_filters if filters is None else filters
        run.dependencies = merged_dependencies(defaults.dependencies, dependencies)
        run.knowledge_filters = effective_filters(defaults.knowledge_filters, filters)
        run.flags = RunFlags(
            request.add_history_to_context,
            request.add_dependencies_to_context,
            request.add_session_state_to_context,
            request.debug_mode,
        )
        run.run_context = given
        run.hook_arguments = dict(request.hook_arguments)
        run.send_media = defaults.send_media_to_model

    def context(
        self, session_id: str | None, user_id: str | None, request: RunRequest | None = None
    ) -> RunSession:
        """A run's session context: the agent's session and user unless given (by the
        call, else by its `RunContext`); its metadata the call's (else its `RunContext`'s)
        with the agent's merged over it."""
        given = request.run_context if request else None
        state: Mapping[str, Any] | None = request.session_state if request else None
        metadata = request.metadata if request else None
        if given is not None:
            session_id = session_id or given.session_id or None
            user_id = user_id or given.user_id
            state = given.session_state if state is None else state
            metadata = given.metadata if metadata is None else metadata
        content = request.input if request else None
        return RunSession(
            session_id or self.defaults.session_id,
            user_id or self.defaults.user_id,
            self.defaults.id,
            {},
            dict(state) if state is not None else None,
            content if isinstance(content, str) else None,
            merged_metadata(metadata, self.defaults.metadata),
        )

    def streams(self, request: RunRequest) -> bool:
        """Whether ``request`` streams typed events (its ``stream``, else the agent's; only
        Agno's runs take it)."""
        if request.kind is not INPUT or request.stream is not None:
            return bool(request.stream)
        return bool(self.defaults.stream)

    def event_sink(self, stream_events: bool | None) -> type[Sink]:
        every = self.defaults.stream_events if stream_events is None else stream_events
        return EventSink if every else ContentEventSink

    def sink_for(self, request: RunRequest) -> type[Sink]:
        """How the caller of ``request`` reads its run."""
        if request.deltas:
            return DeltaSink
        if self.streams(request):
            return self.event_sink(request.stream_events)
        if request.kind is QUERY:
            return SilentReasoningSink if request.ignore_reasoning_messages else ResponseSink
        return MessageSink

    def continued(self, continuation: Continuation) -> tuple[AgentStream[Any, Any], bool]:
        """The stream of the rest of a paused run, and whether `continue_run` returns its
        `RunOutput`."""
        run_id = continuation.run_id
        if not continuation.rerun.plain:
            return self.rerun(continuation)
        run = self.running.get(run_id)
        if run is not None:
            if run.status != "paused" or not _of_caller(run, continuation):
                raise UnknownRunError(f"no paused run {run_id!r} in this agent", run_id=run_id)
            continuation.decisions.apply(run.requirements)
            run.status = "running"
            run.started = time.perf_counter()
            run.running = run.cancel_requested = False
        elif self.defaults.db is not None:  # paused by another agent (or process)
            run = self.stored_run(continuation)
        else:
            raise UnknownRunError(f"no paused run {run_id!r} in this agent", run_id=run_id)
        if continuation.stream:
            sink = self.event_sink(continuation.stream_events)
        else:
            sink = ResponseSink if run.kind is QUERY else MessageSink
        self.resume_context(run, continuation)
        eager = run.kind.returns_output and not continuation.stream
        stream: AgentStream[Any, Any] = AgentStream(self.launch(), run, sink)
        stream.yield_run_output = continuation.yield_run_output
        return stream, eager

    def rerun(self, continuation: Continuation) -> tuple[AgentStream[Any, Any], bool]:
        """A new run continuing an ended one (`rerun`), set up as it begins."""
        rerun = continuation.rerun
        source = rerun.source
        request = RunRequest(
            kind=INPUT,
            input=rerun.text or "(set up as the run begins)",
            session_id=continuation.session_id or (source.session_id if source else None),
            user_id=continuation.user_id or (source.user_id if source else None),
            metadata=continuation.metadata,
            run_id=uuid.uuid4().hex,
            run_context=continuation.run_context,
            dependencies=continuation.dependencies,
            knowledge_filters=continuation.knowledge_filters,
            debug_mode=continuation.debug_mode,
            hook_arguments=continuation.hook_arguments,
            stream=continuation.stream,
            stream_events=continuation.stream_events,
            yield_run_output=continuation.yield_run_output,
        )
        run = self.new_run(request)
        assert run.session is not None  # an Agno run has its session
        # its messages are the earlier run's, read as it begins (`rerun.start_rerun`)
        run.messages, run.input, run.session.rerun = [], rerun.text, rerun
        stream: AgentStream[Any, Any] = AgentStream(self.launch(), run, self.sink_for(request))
        stream.yield_run_output = continuation.yield_run_output
        return stream, not self.streams(request)

    def resume_context(self, run: RunState, continuation: Continuation) -> None:
        """What the rest of a resumed run knows, as `add_context` for a new one: the
        continuation's dependencies, knowledge filters and metadata (else its
        ``run_context``'s, else the run's own), its ``debug_mode`` and hook keywords."""
        given, defaults = continuation.run_context, self.defaults
        dependencies = continuation.dependencies
        filters = continuation.knowledge_filters
        metadata = continuation.metadata
        if given is not None:
            dependencies = given.dependencies if dependencies is None else dependencies
            filters = given.knowledge_filters if filters is None else filters
            metadata = given.metadata if metadata is None else metadata
            run.run_context = given
        if dependencies is not None:
            run.dependencies = merged_dependencies(defaults.dependencies, dependencies)
        if filters is not None:
            run.knowledge_filters = effective_filters(defaults.knowledge_filters, filters)
        if metadata is not None and run.session is not None:
            run.session.metadata = merged_metadata(metadata, defaults.metadata)
        if continuation.debug_mode is not None:
            run.flags = attrs.evolve(run.flags, debug_mode=continuation.debug_mode)
        run.hook_arguments.update(continuation.hook_arguments)

    def stored_run(self, continuation: Continuation) -> RunState:
        """A paused run another agent (or process) stored in the db: loaded, and decided,
        as it starts (`sessions.AgentSessions.begin`)."""
        context = self.context(continuation.session_id, continuation.user_id)
        context.resume = continuation.decisions
        defaults = self.defaults
        return RunState(
            continuation.run_id,
            INPUT,
            [],
            0,
            defaults.reasoning,
            self.output,
            defaults.tool_call_limit,
            session=context,
            usage_limits=defaults.usage_limits,
        )


def _of_caller(run: RunState, continuation: Continuation) -> bool:
    """Whether ``run`` is of the session and user the continuation names (if it does)."""
    context = run.session
    for asked, own in (
        (continuation.session_id, context.session_id if context else None),
        (continuation.user_id, context.user_id if context else None),
    ):
        if asked is not None and asked != own:
            return False
    return True


class RunStyle:
    """What `Agent.run` is on an agent (see the module docstring): chosen once, when the
    agent is built, and the second type parameter of ``Agent[OutputT, RunT]``."""

    #: The kind of the runs its `run` makes.
    kind: RunKind

    def run(self, runs: AgentRuns, request: RunRequest) -> Any:
        raise NotImplementedError


class AgnoRun(RunStyle):
    """Agno's ``run(input)``: the `RunOutput`, or typed events with ``stream=True``."""

    kind = INPUT

    def run(self, runs: AgentRuns, request: RunRequest) -> Any:
        if request.config is not None:
            raise TypeError(
                "run(..., config) is Ailoy 0.2's run, and this agent was built in Agno's "
                "form (Agent(model=...)), whose run takes one input and returns a "
                "RunOutput: stream Ailoy's outputs with agent.run_sync(messages, config) "
                "or agent.run_delta(messages, config), or build the agent as Ailoy does, "
                "Agent(lm) with a LangModel given first"
            )
        stream = runs.start(request)
        return stream if runs.streams(request) else run_output(stream)


class AiloyRun(RunStyle):
    """Ailoy 0.2's ``run(messages, config=None)``: one `MessageOutput` per new message."""

    kind = MESSAGES

    def run(self, runs: AgentRuns, request: RunRequest) -> Any:
        agno = request.given("config")
        if agno:
            raise TypeError(
                f"run() got {', '.join(agno)}: this agent was built in Ailoy 0.2's form "
                "(Agent(lm), a LangModel given first), whose run(messages, config=None) "
                "streams MessageOutputs and takes nothing else. For Agno's run (stream=, "
                "session_id=, files=, ...) give the model by keyword: Agent(model=lm), or "
                "use agent.arun(...) here"
            )
        return runs.start(request)


#: Which `Agent.run` an agent has: `AgnoRun` unless built as Ailoy 0.2's ``Agent(lm)``.
RunT = TypeVar("RunT", bound=RunStyle, default=AgnoRun)
