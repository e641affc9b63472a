"""A run's state: `RunState`, what one run holds while the turn loop drives it (its
messages, status, metrics, pending calls), with its binding to its session
(`RunSession`), and its cancellation from any thread or task (`request_cancel`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import attrs
from ferrule_kernel import FerruleError
from ferrule_kit.content.messages import Message, ToolCall
from ferrule_kit.guardrails import RunInput
from ferrule_kit.models.lm import Reasoning
from ferrule_kit.stores.storage import SessionSummary, ToolExecution, UserMemory

from ..knowledge.document import MessageReferences
from ..media import Audio, Image, Video
from ..metrics import RunMetrics
from ..tools.tool_context import RunContext
from .cancellation import BaseRunCancellationManager
from .configs import AgentConfig
from .output_schema import StructuredOutput
from .reply_media import reply_media
from .request import Decisions, RunKind
from .results import RunOutput, RunStatusName, ToolConfirmation
from .usage import UsageLimits


@attrs.define(eq=False)
class RunSession:
    """A run's session: who and where it runs for, its state, and how far it is set up."""

    session_id: str
    user_id: str | None
    agent_id: str | None
    #: The session's state for this run (tools change it through `ToolContext`).
    session_state: dict[str, Any]
    #: What the caller passed as ``session_state``: merged over the stored state.
    state_updates: dict[str, Any] | None = None
    #: The input as stored with the run.
    input: Any = None
    metadata: dict[str, Any] = attrs.Factory(dict)
    content_type: str = "str"
    #: Index in the run's messages of its own first message (after system and history).
    own: int = 0
    #: Where the history it was given is among the run's messages (start, stop).
    history: tuple[int, int] = (0, 0)
    #: True once set up; a run is committed only then.
    ready: bool = False
    #: The stored session once its state is loaded and its dependencies resolved (None
    #: without one; False before): `run_sessions.RunSessions.prepare`.
    prepared: Any = False
    #: A paused run stored by another process, to load and resume with these decisions.
    resume: Decisions | None = None
    #: An ended run to continue from (`rerun.Rerun`), set up as the run begins; then what
    #: the run records of it (`RunOutput`'s fork / regenerate fields, by name).
    rerun: Any = None
    lineage: dict[str, Any] = attrs.Factory(dict)
    memories: list[UserMemory] = attrs.Factory(list)
    summary: SessionSummary | None = None
    #: The knowledge searches made for the run (`RunOutput.references`).
    references: list[MessageReferences] = attrs.Factory(list)
    #: The state as read from the db before the run changed it, and its version: the run's
    #: state is written compare-and-set, its change re-applied if another writer was first.
    state_base: dict[str, Any] = attrs.Factory(dict)
    state_version: int = 0


@attrs.frozen
class RunFlags:
    """A run's own switches over the agent's (None: the agent's): what goes in its
    context, and whether its steps are logged at debug level."""

    add_history_to_context: bool | None = None
    add_dependencies_to_context: bool | None = None
    add_session_state_to_context: bool | None = None
    debug_mode: bool | None = None


@attrs.define(eq=False)
class RunState:
    id: str
    #: What started it (`request.RunKind`): `QUERY`, `MESSAGES` (a whole conversation)
    #: or `INPUT` (Agno's one input).
    kind: RunKind
    #: Everything the model sees: system message, history, this run's messages.
    messages: list[Message]
    #: Index of this run's first new message in ``messages``.
    first_new: int
    reasoning: Reasoning
    output: StructuredOutput | None
    tool_call_limit: int | None
    status: RunStatusName = "running"
    content: Any = None
    error: FerruleError | None = None
    metrics: RunMetrics = attrs.Factory(RunMetrics)
    wire: list[dict[str, Any]] = attrs.Factory(list)  # ``messages`` on the wire, as far as sent
    tool_calls_made: int = 0
    model_retries: int = 0  # failed model requests tried again (`model_requests.RetryPolicy`)
    #: With ``store_events``: the names of the events not kept (None: none kept), and the
    #: events kept so far (`sinks.EventSink`).
    events_skipped: frozenset[str] | None = None
    events: list[Any] | None = None
    pending: list[ToolCall] = attrs.Factory(list)  # the paused turn's calls
    requirements: list[ToolConfirmation] = attrs.Factory(list)
    started: float = attrs.Factory(time.perf_counter)
    elapsed: float = 0.0  # of earlier legs (before a pause)
    running: bool = False
    cancel_requested: bool = False
    #: The cancellation manager it registered with as it started (`cancellation`), asked
    #: at its checkpoints; None while it is not registered (a single step never is).
    canceller: BaseRunCancellationManager | None = None
    task: asyncio.Task[None] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    #: The session it runs in (None for a single step).
    session: RunSession | None = None
    executions: list[ToolExecution] = attrs.Factory(list)  # the tool calls run, in order
    usage_limits: UsageLimits | None = None
    #: What the caller passed as ``deps``, for the tools (`ToolContext.deps`).
    tool_deps: Any = None
    #: Tool name -> the times it raised `ModelRetry` so far.
    retries: dict[str, int] = attrs.Factory(dict)
    #: What the caller passed, and the files with it: the pre-hooks' `RunInput`.
    input: Any = None
    files: Sequence[Any] = ()
    #: This run's own ``infer`` settings over the agent's ``options`` (Ailoy's
    #: ``AgentConfig.inference``: temperature, top_p, max_tokens).
    infer_options: dict[str, Any] = attrs.Factory(dict)
    #: Ailoy's ``AgentConfig`` of this run: its knowledge settings (``top_k``) and its
    #: inference's ``document_polyfill`` shape how knowledge reaches the model.
    config: AgentConfig | None = None
    #: The results of tools with ``show_result``, shown before the reply (Agno's).
    shown: list[str] = attrs.Factory(list)
    #: Agno's ``dependencies`` of the run (the agent's, the call's over them): functions
    #: among them are called as the run starts (`context.resolve_dependencies`).
    dependencies: dict[str, Any] | None = None
    #: The knowledge filters of the run (the agent's, the call's over them).
    knowledge_filters: Any = None
    flags: RunFlags = attrs.Factory(RunFlags)
    #: The run's Agno `RunContext` (the caller's own, when one was given): one per run,
    #: its state the session's (`inputs.run_context_of`).
    run_context: RunContext | None = None
    #: Each message's Agno view in that context, made once (id -> (message, view)): the
    #: engine never changes a message it made, so a view made stays its message's.
    message_views: dict[int, tuple[Message, Any]] = attrs.Factory(dict)
    #: The caller's other keywords, for the hooks by name (Agno's ``**kwargs``).
    hook_arguments: dict[str, Any] = attrs.Factory(dict)
    #: Its files go to the model with its input (False: the hooks and tools see them only).
    send_media: bool = True
    #: Who runs it: the agent's name, its (first) model's id and provider's name.
    agent_name: str | None = None
    model: str | None = None
    model_provider: str | None = None
    #: Its tool results the model reads compressed: index in ``messages`` -> the text sent.
    compressed: dict[int, str] = attrs.Factory(dict)
    #: The follow-up prompts suggested after its reply (``followups=True``).
    followups: list[str] | None = None
    #: The steps it reasoned in (`reasoning_steps`), for `RunOutput.reasoning_steps`.
    reasoning_steps: list[Any] | None = None

    def to_output(self) -> RunOutput[Any]:
        context = self.session
        output = RunOutput(
            self.id,
            self.status,
            self.content,
            list(self.messages[self.first_new :]),
            self.metrics,
            list(self.requirements) if self.status == "paused" else [],
            self.error,
            agent_name=self.agent_name,
            model=self.model,
            model_provider=self.model_provider,
            input=run_input_of(self.input, self.files) if self.input is not None else None,
            reasoning_content="".join(
                part.text for m in self.messages[self.first_new :] for part in m.reasoning
            )
            or None,
            tools=list(self.executions) or None,
            followups=self.followups,
            reasoning_steps=self.reasoning_steps,
            events=list(self.events) if self.events is not None else None,
        )
        output.images, output.response_audio = reply_media(self.messages[self.first_new :])
        if context is not None:
            output.agent_id, output.session_id = context.agent_id, context.session_id
            output.user_id, output.content_type = context.user_id, context.content_type
            output.session_state, output.metadata = context.session_state, dict(context.metadata)
            output.references = list(context.references) or None
            for name, value in context.lineage.items():
                setattr(output, name, value)
        return output


def run_input_of(content: Any, files: Sequence[Any]) -> RunInput:
    """A run's input as Agno's `RunInput`: its content, and its media by kind."""
    media = list(files)

    def of(kind: type) -> list[Any] | None:
        return [m for m in media if isinstance(m, kind)] or None

    rest = [m for m in media if not isinstance(m, (Image, Video, Audio))]
    return RunInput(content, of(Image), of(Video), of(Audio), rest or None)


def media_of(run_input: RunInput) -> list[Any]:
    """The media of ``run_input`` in the order the run sends them (images, audio,
    videos, then files: Agno's)."""
    kinds = (run_input.images, run_input.audios, run_input.videos, run_input.files)
    return [m for items in kinds for m in items or ()]


def cancel_in_loop(run: RunState) -> None:
    run.cancel_requested = True
    if run.running and run.task is not None and not run.task.done():
        run.task.cancel()


def request_cancel(run: RunState) -> None:
    loop = run.loop
    if loop is None or loop.is_closed():
        run.cancel_requested = True  # not started yet: it stops at its first step
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        cancel_in_loop(run)
    else:
        loop.call_soon_threadsafe(cancel_in_loop, run)
