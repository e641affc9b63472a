"""How calls become runs (`AgentRuns`): each call of `Agent.query`, `run`, `arun`,
`run_delta` or `continue_run` (their typed overloads are `run_calls.RunCalls`) makes a
`RunState` with its session context (`RunSession`) and the `AgentStream` its caller reads;
`loop.drive` runs it.

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
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from ferrule_kernel import InvalidInputError
from ferrule_kit.lm import Reasoning
from ferrule_kit.messages import Message

from .configs import AgentConfig
from .context import Decisions, RunSession, input_messages, is_history
from .errors import UnknownRunError
from .output_schema import StructuredOutput, structured_output
from .prompt import prompt_parts
from .results import RunOutput
from .sinks import (
    ContentEventSink,
    EventSink,
    MessageSink,
    ResponseSink,
    SilentReasoningSink,
    Sink,
)
from .state import RunState
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
    ) -> None:
        self.defaults = defaults
        self.output = output
        self.running = running
        self.launch = launch

    def stream_of(self, run: RunState, sink: type[Sink]) -> AgentStream[Any, Any]:
        return AgentStream(self.launch(), run, sink)

    def new_run(
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
        """A run of ``messages`` (the new ones from ``first_new``); each option left None
        is the agent's."""
        defaults = self.defaults
        output = self.output if output_schema is None else structured_output(output_schema)
        schema = defaults.output_schema if output_schema is None else output_schema
        if schema is not None:
            context.content_type = schema.__name__ if isinstance(schema, type) else "dict"
        return RunState(
            uuid.uuid4().hex,
            kind,
            messages,
            first_new,
            defaults.reasoning if reasoning is None else reasoning,
            output,
            defaults.tool_call_limit if tool_call_limit is None else tool_call_limit,
            session=context,
            usage_limits=defaults.usage_limits if usage_limits is None else usage_limits,
            tool_deps=deps,
        )

    def context(
        self,
        session_id: str | None,
        user_id: str | None,
        session_state: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        input: Any = None,
    ) -> RunSession:
        """A run's session context: the agent's session and user unless given."""
        return RunSession(
            session_id or self.defaults.session_id,
            user_id or self.defaults.user_id,
            self.defaults.id,
            {},
            dict(session_state) if session_state is not None else None,
            input if isinstance(input, str) else None,
            dict(metadata or {}),
        )

    def query(
        self,
        prompt: Any,
        reasoning: Reasoning | None,
        output_schema: Any,
        tool_call_limit: int | None,
        files: Sequence[Any],
        session_id: str | None,
        user_id: str | None,
        usage_limits: UsageLimits | None,
        deps: Any,
        ignore_reasoning_messages: bool,
    ) -> AgentStream[Any, Any]:
        """The stream of a `query` (see `Agent.query`)."""
        user = Message("user", prompt_parts(prompt, files))
        context = self.context(session_id, user_id, input=prompt)
        options = (reasoning, output_schema, tool_call_limit, context, usage_limits, deps)
        run = self.new_run("query", [user], 0, *options)
        run.input, run.files = prompt, files
        sink = SilentReasoningSink if ignore_reasoning_messages else ResponseSink
        return self.stream_of(run, sink)

    def event_sink(self, stream_events: bool | None) -> type[Sink]:
        every = self.defaults.stream_events if stream_events is None else stream_events
        return EventSink if every else ContentEventSink

    def input_run(
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
        config: AgentConfig | None,
        yield_run_output: bool,
    ) -> tuple[AgentStream[Any, Any], bool]:
        """The stream of a `run` / `arun`, and whether `run` returns its `RunOutput`."""
        if config is not None:
            return self.configured(input, config, MessageSink), False
        if stream is None:
            stream = self.defaults.stream
        messages = input_messages(input, files)
        context = self.context(session_id, user_id, session_state, metadata, input)
        options = (reasoning, output_schema, tool_call_limit, context, usage_limits, deps)
        if stream is None and is_history(input):  # the stateless guide's run(messages)
            run = self.new_run("run", messages, len(messages), *options)
            run.input = input
            sink: type[Sink] = MessageSink
        else:
            run = self.new_run("input", messages, 0, *options)
            run.input, run.files = input, files
            sink = self.event_sink(stream_events) if stream else MessageSink
        agent_stream = self.stream_of(run, sink)
        agent_stream.yield_run_output = flag("yield_run_output", yield_run_output)
        return agent_stream, run.kind == "input" and not stream

    def configured(
        self, messages: Any, config: AgentConfig | None, sink: type[Sink]
    ) -> AgentStream[Any, Any]:
        """The stream of a stateless run of Ailoy's ``messages`` under its ``AgentConfig``."""
        if config is not None and not isinstance(config, AgentConfig):
            raise InvalidInputError(
                f"expected an AgentConfig, got {type(config).__name__}", field="config"
            )
        history = input_messages(messages)
        inference = config.inference if config is not None else None
        options = inference.infer_options() if inference is not None else {}
        reasoning = options.pop("reasoning", None)
        context = self.context(None, None, input=messages)
        run = self.new_run("run", history, len(history), reasoning, None, None, context)
        run.input, run.infer_options, run.config = messages, options, config
        return self.stream_of(run, sink)

    def continued(
        self,
        run_id: str,
        decisions: Decisions,
        stream: bool | None,
        stream_events: bool | None,
    ) -> tuple[AgentStream[Any, Any], bool]:
        """The stream of the rest of a paused run, and whether `continue_run` returns its
        `RunOutput`."""
        run = self.running.get(run_id)
        if run is not None:
            if run.status != "paused":
                raise UnknownRunError(f"no paused run {run_id!r} in this agent", run_id=run_id)
            decisions.apply(run.requirements)
            run.status = "running"
            run.started = time.perf_counter()
            run.running = run.cancel_requested = False
        elif (
            self.defaults.db is not None
        ):  # paused by another agent (or process): loaded as it starts
            context = self.context(None, None)
            context.resume = decisions
            run = self.new_run("input", [], 0, None, None, None, context)
            run.id = run_id
        else:
            raise UnknownRunError(f"no paused run {run_id!r} in this agent", run_id=run_id)
        if stream:
            sink = self.event_sink(stream_events)
        else:
            sink = ResponseSink if run.kind == "query" else MessageSink
        return self.stream_of(run, sink), run.kind == "input" and not stream


def output_of(stream: AgentStream[Any, Any]) -> RunOutput[Any]:
    """Run ``stream`` to its end: its `RunOutput`, or the typed error of a failed run."""
    output = stream.result()
    if output.status == "error" and output.error is not None:
        raise output.error
    return output


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(
            f"{name} must be True or False, got {type(value).__name__}", field=name
        )
    return value
