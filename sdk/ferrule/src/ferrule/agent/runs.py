"""How calls become runs: `query` (the agent guide's stateful chat), `run` / `arun` (the
stateless guide's run on a whole history, and the Agent reference's run of one input) and
`continue_run`. Each makes a `RunState` with its session context (`RunSession`) and the
stream its caller reads; `loop.drive` runs it.

`run` serves both seeds. The stateless one passes the whole conversation, a list of
messages, and iterates: ``async for resp in agent.run(messages)`` streams one
`MessageOutput` per new message. The Agent reference's passes one input (a string, a
message, a dict, a model...) and gets a `RunOutput` back (``agent.run("Hi").content``),
or typed events with ``stream=True``. So a list of messages with ``stream`` unset streams
messages, anything else returns a `RunOutput`; and the stream `run` and `arun` return can
also be awaited for its `RunOutput` (``await agent.arun("Hi")``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from ferrule_kernel import InvalidInputError
from ferrule_kit.lm import Reasoning
from ferrule_kit.messages import Message

from .configs import AgentConfig
from .context import Decisions, RunSession, input_messages, is_history
from .deltas import MessageDeltaOutput
from .errors import UnknownRunError
from .output_schema import StructuredOutput, structured_output
from .prompt import prompt_parts
from .results import AgentResponse, MessageOutput, OutputT, RunOutput, ToolConfirmation
from .sinks import (
    ContentEventSink,
    DeltaSink,
    EventSink,
    MessageSink,
    ResponseSink,
    SilentReasoningSink,
    Sink,
)
from .state import RunState
from .stream import AgentStream, Launch
from .usage import UsageLimits

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._typing import QueryOptions, RunOptions
    from .events import RunOutputEvent

    #: A whole conversation: what makes ``run(messages)`` stream `MessageOutput`s.
    _History = Sequence[Message | Mapping[str, Any]]


#: The content type of one run given its own ``output_schema`` class.
SchemaT = TypeVar("SchemaT")


class _Runs(Generic[OutputT]):
    """The calls that start runs, on `Agent` (see the module docstring).

    Typed for checkers as pydantic-ai's agent is: a run's content is an ``OutputT`` (the
    agent's: `Agent` is ``Agent[str]`` without an ``output_schema``), or the class of the
    run's own ``output_schema``; a JSON schema gives ``dict[str, Any]``. The overloads
    follow what `run` returns: a stream (``stream=True``, or a list of messages with
    ``stream`` unset) or the `RunOutput`. An agent made with ``stream=True`` streams from
    ``run(prompt)`` too: pass ``stream=`` explicitly for checkers to know.
    """

    # set by Agent.__init__
    id: str
    db: Any
    session_id: str
    user_id: str | None
    stream: bool | None
    stream_events: bool | None
    reasoning: Reasoning
    output_schema: Any
    _output: StructuredOutput | None
    tool_call_limit: int | None
    usage_limits: UsageLimits | None
    _runs: dict[str, RunState]

    def _launch(self) -> Launch:
        raise NotImplementedError  # Agent's

    def _stream_of(self, run: RunState, sink: type[Sink]) -> AgentStream[Any, Any]:
        return AgentStream(self._launch(), run, sink)

    def _new_run(
        self,
        kind: Literal["query", "run", "input"],
        messages: list[Message],
        first_new: int,
        reasoning: Reasoning | None,
        output_schema: Any,
        tool_call_limit: int | None,
        context: RunSession,
        usage_limits: UsageLimits | None = None,
        deps: Any = None,
    ) -> RunState:
        output = self._output if output_schema is None else structured_output(output_schema)
        schema = self.output_schema if output_schema is None else output_schema
        if schema is not None:
            context.content_type = schema.__name__ if isinstance(schema, type) else "dict"
        return RunState(
            uuid.uuid4().hex,
            kind,
            messages,
            first_new,
            self.reasoning if reasoning is None else reasoning,
            output,
            self.tool_call_limit if tool_call_limit is None else tool_call_limit,
            session=context,
            usage_limits=self.usage_limits if usage_limits is None else usage_limits,
            tool_deps=deps,
        )

    def _context(
        self,
        session_id: str | None,
        user_id: str | None,
        session_state: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        input: Any = None,
    ) -> RunSession:
        return RunSession(
            session_id or self.session_id,
            user_id or self.user_id,
            self.id,
            {},
            dict(session_state) if session_state is not None else None,
            input if isinstance(input, str) else None,
            dict(metadata or {}),
        )

    @overload
    def query(
        self,
        prompt: Any,
        reasoning: Reasoning | None = None,
        *,
        output_schema: None = None,
        **options: Unpack[QueryOptions],
    ) -> AgentStream[AgentResponse, OutputT]: ...
    @overload
    def query(
        self,
        prompt: Any,
        reasoning: Reasoning | None = None,
        *,
        output_schema: type[SchemaT],
        **options: Unpack[QueryOptions],
    ) -> AgentStream[AgentResponse, SchemaT]: ...
    @overload
    def query(
        self,
        prompt: Any,
        reasoning: Reasoning | None = None,
        *,
        output_schema: Mapping[str, Any],
        **options: Unpack[QueryOptions],
    ) -> AgentStream[AgentResponse, dict[str, Any]]: ...
    def query(
        self,
        prompt: Any,
        reasoning: Reasoning | None = None,
        *,
        output_schema: Any = None,
        tool_call_limit: int | None = None,
        files: Sequence[Any] = (),
        session_id: str | None = None,
        user_id: str | None = None,
        usage_limits: UsageLimits | None = None,
        deps: Any = None,
        ignore_reasoning_messages: bool = False,
    ) -> AgentStream[AgentResponse, Any]:
        """Ask, with the conversation so far, and stream `AgentResponse` deltas; the
        exchange joins the history when the run completes (a failed or cancelled run
        leaves the history as it was). ``files`` (paths, or parts such as
        ``DocumentContent.from_path(...)``) go after the prompt, as Agno's ``files=``:
        a path becomes a document part when ferrule-document is installed.

        The conversation so far is the agent's own (`get_messages`), or, on an agent with
        a ``db`` and ``add_history_to_context``, the session's stored history; with a db
        the run is stored in the session (``session_id``, default the agent's).
        ``usage_limits`` (default: the agent's) bound the run's model use; ``deps`` go to
        the tools (`ToolContext.deps`). With ``ignore_reasoning_messages`` (Ailoy's flag)
        the model still reasons, but no ``reasoning`` response is streamed."""
        user = Message("user", prompt_parts(prompt, files))
        context = self._context(session_id, user_id, input=prompt)
        options = (reasoning, output_schema, tool_call_limit, context, usage_limits, deps)
        run = self._new_run("query", [user], 0, *options)
        run.input, run.files = prompt, files
        sink = SilentReasoningSink if ignore_reasoning_messages else ResponseSink
        return self._stream_of(run, sink)

    aquery = query

    def _event_sink(self, stream_events: bool | None) -> type[Sink]:
        every = self.stream_events if stream_events is None else stream_events
        return EventSink if every else ContentEventSink

    def _input_run(
        self,
        input: Any,
        stream: bool | None,
        stream_events: bool | None,
        files: Sequence[Any],
        session_id: str | None,
        user_id: str | None,
        session_state: Mapping[str, Any] | None,
        metadata: Mapping[str, Any] | None,
        reasoning: Reasoning | None,
        output_schema: Any,
        tool_call_limit: int | None,
        usage_limits: UsageLimits | None,
        deps: Any,
    ) -> tuple[AgentStream[Any, Any], bool]:
        """The stream of a `run` / `arun`, and whether `run` returns its `RunOutput`."""
        if stream is None:
            stream = self.stream
        messages = input_messages(input, files)
        context = self._context(session_id, user_id, session_state, metadata, input)
        options = (reasoning, output_schema, tool_call_limit, context, usage_limits, deps)
        if stream is None and is_history(input):  # the stateless guide's run(messages)
            run = self._new_run("run", messages, len(messages), *options)
            run.input = input
            return self._stream_of(run, MessageSink), False
        run = self._new_run("input", messages, 0, *options)
        run.input, run.files = input, files
        sink = self._event_sink(stream_events) if stream else MessageSink
        return self._stream_of(run, sink), not stream

    @overload
    def run(
        self,
        input: _History,
        *,
        stream: None = None,
        output_schema: None = None,
        **options: Unpack[RunOptions],
    ) -> AgentStream[MessageOutput, OutputT]: ...
    @overload
    def run(
        self,
        input: _History,
        *,
        stream: None = None,
        output_schema: type[SchemaT],
        **options: Unpack[RunOptions],
    ) -> AgentStream[MessageOutput, SchemaT]: ...
    @overload
    def run(
        self,
        input: _History,
        *,
        stream: None = None,
        output_schema: Mapping[str, Any],
        **options: Unpack[RunOptions],
    ) -> AgentStream[MessageOutput, dict[str, Any]]: ...
    @overload
    def run(
        self,
        input: Any,
        *,
        stream: Literal[True],
        output_schema: None = None,
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, OutputT]: ...
    @overload
    def run(
        self,
        input: Any,
        *,
        stream: Literal[True],
        output_schema: type[SchemaT],
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, SchemaT]: ...
    @overload
    def run(
        self,
        input: Any,
        *,
        stream: Literal[True],
        output_schema: Mapping[str, Any],
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, dict[str, Any]]: ...
    @overload
    def run(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        output_schema: None = None,
        **options: Unpack[RunOptions],
    ) -> RunOutput[OutputT]: ...
    @overload
    def run(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        output_schema: type[SchemaT],
        **options: Unpack[RunOptions],
    ) -> RunOutput[SchemaT]: ...
    @overload
    def run(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        output_schema: Mapping[str, Any],
        **options: Unpack[RunOptions],
    ) -> RunOutput[dict[str, Any]]: ...
    def run(
        self,
        input: Any,
        *,
        stream: bool | None = None,
        stream_events: bool | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        session_state: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        files: Sequence[Any] = (),
        reasoning: Reasoning | None = None,
        output_schema: Any = None,
        tool_call_limit: int | None = None,
        usage_limits: UsageLimits | None = None,
        deps: Any = None,
        config: AgentConfig | None = None,
        yield_run_output: bool = False,
    ) -> Any:
        """Run on ``input``: a string, a `Message` or message dict, a list of them, parts,
        a pydantic model or a dict (sent as JSON); ``files`` go after a prompt.

        - ``stream=False``, or unset with an input that is not a list of messages: run to
          the end and return the `RunOutput` (a failed run raises its typed error).
        - ``stream=True``: stream the typed events of `ferrule.agent.events` (all of them
          with ``stream_events=True``, else the content and how the run stopped).
        - a list of messages with ``stream`` unset (the stateless guide: the whole
          conversation): stream one `MessageOutput` per new message (a failure raises its
          typed error from the iteration).

        The agent's ``stream`` and ``stream_events`` settings are the defaults.
        ``session_id`` / ``user_id`` default to the agent's; ``session_state`` is merged
        over the session's for this run; ``metadata`` goes with the run; ``usage_limits``
        (default: the agent's) bound its model use; ``deps`` go to the tools
        (`ToolContext.deps`), as pydantic-ai's ``deps``; ``yield_run_output=True`` makes
        a stream yield the `RunOutput` after its last event (Agno's). Without a db
        nothing is kept between runs but ``session_state``.

        With ``config`` (Ailoy 0.2's `AgentConfig`) the input is Ailoy's ``messages`` (a
        string is one user message) and the run streams one `MessageOutput` per message,
        as Ailoy's ``Agent.run`` does, with ``config.inference``'s settings."""
        if config is not None:
            return self._stream_of(self._configured_run(input, config), MessageSink)
        agent_stream, eager = self._input_run(
            input,
            stream,
            stream_events,
            files,
            session_id,
            user_id,
            session_state,
            metadata,
            reasoning,
            output_schema,
            tool_call_limit,
            usage_limits,
            deps,
        )
        agent_stream.yield_run_output = _flag("yield_run_output", yield_run_output)
        return _output_of(agent_stream) if eager else agent_stream

    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[True],
        output_schema: None = None,
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, OutputT]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[True],
        output_schema: type[SchemaT],
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, SchemaT]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[True],
        output_schema: Mapping[str, Any],
        **options: Unpack[RunOptions],
    ) -> AgentStream[RunOutputEvent, dict[str, Any]]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        output_schema: None = None,
        **options: Unpack[RunOptions],
    ) -> AgentStream[MessageOutput, OutputT]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        output_schema: type[SchemaT],
        **options: Unpack[RunOptions],
    ) -> AgentStream[MessageOutput, SchemaT]: ...
    @overload
    def arun(
        self,
        input: Any,
        *,
        stream: Literal[False] | None = None,
        output_schema: Mapping[str, Any],
        **options: Unpack[RunOptions],
    ) -> AgentStream[MessageOutput, dict[str, Any]]: ...
    def arun(
        self,
        input: Any,
        *,
        stream: bool | None = None,
        stream_events: bool | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        session_state: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        files: Sequence[Any] = (),
        reasoning: Reasoning | None = None,
        output_schema: Any = None,
        tool_call_limit: int | None = None,
        usage_limits: UsageLimits | None = None,
        deps: Any = None,
        config: AgentConfig | None = None,
        yield_run_output: bool = False,
    ) -> AgentStream[Any, Any]:
        """`run` for async callers: the same stream, never run ahead; ``await`` it for
        the `RunOutput` (``await agent.arun("Hi")``) or ``async for`` over it."""
        if config is not None:
            return self._stream_of(self._configured_run(input, config), MessageSink)
        agent_stream, _eager = self._input_run(
            input,
            stream,
            stream_events,
            files,
            session_id,
            user_id,
            session_state,
            metadata,
            reasoning,
            output_schema,
            tool_call_limit,
            usage_limits,
            deps,
        )
        agent_stream.yield_run_output = _flag("yield_run_output", yield_run_output)
        return agent_stream

    def run_delta(
        self, messages: Any, config: AgentConfig | None = None
    ) -> AgentStream[MessageDeltaOutput, OutputT]:
        """Ailoy 0.2's ``run_delta``: run on ``messages`` (a string is one user message)
        and stream `MessageDeltaOutput`s: the reply's text and thinking as they come, and
        each message's last delta (an assistant turn's tool calls, a tool's result) with
        its ``finish_reason``; accumulate them with ``MessageDelta`` ``+=``. ``config``
        (`AgentConfig`) sets this run's inference (temperature, think_effort, ...)."""
        return self._stream_of(self._configured_run(messages, config), DeltaSink)

    def run_delta_sync(
        self, messages: Any, config: AgentConfig | None = None
    ) -> AgentStream[MessageDeltaOutput, OutputT]:
        """`run_delta` for ``for`` loops (Ailoy's name; the stream is iterable either way)."""
        return self.run_delta(messages, config)

    def run_sync(
        self, messages: Any, config: AgentConfig | None = None
    ) -> AgentStream[MessageOutput, OutputT]:
        """Ailoy 0.2's ``run_sync``: one `MessageOutput` per message of a run on
        ``messages`` (a string is one user message), for ``for`` loops."""
        return self._stream_of(self._configured_run(messages, config), MessageSink)

    def _configured_run(self, messages: Any, config: AgentConfig | None) -> RunState:
        """A stateless run of Ailoy's ``messages`` under its ``AgentConfig``."""
        if config is not None and not isinstance(config, AgentConfig):
            raise InvalidInputError(
                f"expected an AgentConfig, got {type(config).__name__}", field="config"
            )
        history = input_messages(messages)
        inference = config.inference if config is not None else None
        options = inference.infer_options() if inference is not None else {}
        reasoning = options.pop("reasoning", None)
        context = self._context(None, None, input=messages)
        run = self._new_run("run", history, len(history), reasoning, None, None, context)
        run.input, run.infer_options, run.config = messages, options, config
        return run

    def _continued(
        self,
        run_id: str,
        decisions: Decisions,
        stream: bool | None,
        stream_events: bool | None,
    ) -> tuple[AgentStream[Any, Any], bool]:
        run = self._runs.get(run_id)
        if run is not None:
            if run.status != "paused":
                raise UnknownRunError(f"no paused run {run_id!r} in this agent", run_id=run_id)
            decisions.apply(run.requirements)
            run.status = "running"
            run.started = time.perf_counter()
            run.running = run.cancel_requested = False
        elif self.db is not None:  # paused by another agent (or process): loaded when it starts
            context = self._context(None, None)
            context.resume = decisions
            run = self._new_run("input", [], 0, None, None, None, context)
            run.id = run_id
        else:
            raise UnknownRunError(f"no paused run {run_id!r} in this agent", run_id=run_id)
        if stream:
            sink = self._event_sink(stream_events)
        else:
            sink = ResponseSink if run.kind == "query" else MessageSink
        return self._stream_of(run, sink), run.kind == "input" and not stream

    @overload
    def continue_run(
        self,
        run_id: str,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        confirm: bool | Mapping[str, bool] | None = None,
        reason: str | None = None,
        stream: Literal[True],
        stream_events: bool | None = None,
    ) -> AgentStream[RunOutputEvent, OutputT]: ...
    @overload
    def continue_run(
        self,
        run_id: str,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        confirm: bool | Mapping[str, bool] | None = None,
        reason: str | None = None,
        stream: Literal[False] | None = None,
        stream_events: bool | None = None,
    ) -> RunOutput[OutputT] | AgentStream[AgentResponse | MessageOutput, OutputT]: ...
    def continue_run(
        self,
        run_id: str,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        confirm: bool | Mapping[str, bool] | None = None,
        reason: str | None = None,
        stream: bool | None = None,
        stream_events: bool | None = None,
    ) -> Any:
        """Resume a paused run and return what the call that paused it did: a stream of
        the rest of it, or (a run of one input, or one paused in another process and
        stored in this agent's db) its `RunOutput`; ``stream=True`` streams events.

        Decide each waiting call by passing back the ``requirements`` after `confirm` /
        `reject`, or with ``confirm``: True or False for all, or ``{tool_call_id: bool}``
        (``reason`` goes with refusals). A refused call is not run: the model is told the
        user declined it."""
        decisions = Decisions(requirements, confirm, reason)
        agent_stream, eager = self._continued(run_id, decisions, stream, stream_events)
        return _output_of(agent_stream) if eager else agent_stream

    @overload
    def acontinue_run(
        self,
        run_id: str,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        confirm: bool | Mapping[str, bool] | None = None,
        reason: str | None = None,
        stream: Literal[True],
        stream_events: bool | None = None,
    ) -> AgentStream[RunOutputEvent, OutputT]: ...
    @overload
    def acontinue_run(
        self,
        run_id: str,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        confirm: bool | Mapping[str, bool] | None = None,
        reason: str | None = None,
        stream: Literal[False] | None = None,
        stream_events: bool | None = None,
    ) -> AgentStream[AgentResponse | MessageOutput, OutputT]: ...
    def acontinue_run(
        self,
        run_id: str,
        requirements: Sequence[ToolConfirmation] | None = None,
        *,
        confirm: bool | Mapping[str, bool] | None = None,
        reason: str | None = None,
        stream: bool | None = None,
        stream_events: bool | None = None,
    ) -> AgentStream[Any, Any]:
        """`continue_run` for async callers: the stream (await it for the `RunOutput`)."""
        decisions = Decisions(requirements, confirm, reason)
        return self._continued(run_id, decisions, stream, stream_events)[0]


def _output_of(stream: AgentStream[Any, Any]) -> RunOutput[Any]:
    """Run ``stream`` to its end: its `RunOutput`, or the typed error of a failed run."""
    output = stream.result()
    if output.status == "error" and output.error is not None:
        raise output.error
    return output


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(
            f"{name} must be True or False, got {type(value).__name__}", field=name
        )
    return value
