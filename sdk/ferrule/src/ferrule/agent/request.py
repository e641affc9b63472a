"""What a run was asked: `RunRequest`, built by keyword by each call that starts a run
(`Agent.query`, `run`, `arun`, `run_delta`, `run_sync`, `print_response`...) and taken by
everything below it; `Continuation`, what `continue_run` was asked (the `Decisions` on the calls a paused run
waits for); and the run's
`RunKind`, chosen once by the call, which says how the input becomes the run's messages
and what the run is to its agent:

- `QUERY` (Ailoy 0.1's `Agent.query`): the prompt is one user message after the agent's
  own conversation, which the completed run joins;
- `MESSAGES` (Ailoy 0.2's `Agent.run` / `run_delta` / `run_sync`, and `Agent.step`): the
  input is the whole conversation (a string is one user message), and the run keeps
  nothing;
- `INPUT` (Agno's `Agent.run` / `arun`): one input (a string, a message, a list of
  messages, a model...), and ``run`` returns the `RunOutput` unless it streams.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import Reasoning

from ..models.response import ToolExecution
from ..tools.tool_context import RunContext
from .configs import AgentConfig
from .inputs import input_messages
from .prompt import prompt_parts
from .rerun import RERUN_KEYS, Rerun, rerun_of
from .results import ToolConfirmation
from .usage import UsageLimits


class RunKind:
    """How a run's input becomes its messages, and what the run is to its agent (see the
    module docstring); one instance per kind."""

    name: ClassVar[str]
    #: The run starts from the agent's own conversation and, completed, joins it.
    joins_conversation: ClassVar[bool] = False
    #: `Agent.run` / `continue_run` without ``stream`` return its `RunOutput`.
    returns_output: ClassVar[bool] = False

    def messages(self, content: Any, files: Sequence[Any]) -> list[Message]:
        """The run's own messages, from its input and the files that go with it."""
        raise NotImplementedError

    def first_new(self, messages: list[Message]) -> int:
        """Where the run's new messages start (the rest came with the input)."""
        return 0

    def __repr__(self) -> str:
        return self.name


class QueryKind(RunKind):
    name = "query"
    joins_conversation = True

    def messages(self, content: Any, files: Sequence[Any]) -> list[Message]:
        return [Message("user", prompt_parts(content, files))]


class MessagesKind(RunKind):
    name = "messages"

    def messages(self, content: Any, files: Sequence[Any]) -> list[Message]:
        return input_messages(content, files)

    def first_new(self, messages: list[Message]) -> int:
        return len(messages)


class InputKind(RunKind):
    name = "input"
    returns_output = True

    def messages(self, content: Any, files: Sequence[Any]) -> list[Message]:
        return input_messages(content, files)


QUERY, MESSAGES, INPUT = QueryKind(), MessagesKind(), InputKind()


def _is_flag(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, bool):
        raise InvalidInputError(
            f"{attribute.name} must be True or False, got {type(value).__name__}",
            field=attribute.name,
        )


def _maybe_flag(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None:
        _is_flag(instance, attribute, value)


def _maybe_dict(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, Mapping):
        raise InvalidInputError(
            f"{attribute.name} must be a dict, got {type(value).__name__}", field=attribute.name
        )


@attrs.frozen(kw_only=True)
class RunRequest:
    """One call's request for a run: its input and options (None: the agent's), and how
    its caller reads it."""

    kind: RunKind
    input: Any
    #: Files after a prompt, then Agno's ``images`` / ``audio`` / ``videos`` (`media_files`).
    files: Sequence[Any] = ()
    session_id: str | None = None
    user_id: str | None = None
    #: Merged over the session's state for this run.
    session_state: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    reasoning: Reasoning | None = None
    output_schema: Any = None
    tool_call_limit: int | None = None
    usage_limits: UsageLimits | None = None
    #: For the tools (`ToolContext.deps`), as pydantic-ai's ``deps``.
    deps: Any = None
    #: The run's id (Agno's ``run_id``; None: a new one).
    run_id: str | None = None
    #: Agno's `RunContext` given by the caller: the run's context (its state, dependencies,
    #: knowledge filters and metadata are the defaults of this call's own).
    run_context: RunContext | None = None
    #: Agno's ``dependencies``: merged over the agent's, resolved as the run starts.
    dependencies: Mapping[str, Any] | None = attrs.field(default=None, validator=_maybe_dict)
    #: Agno's ``knowledge_filters`` (a dict, or a list of `ferrule.filters` expressions):
    #: over the agent's for this run.
    knowledge_filters: Any = None
    #: This run's own context switches (None: the agent's).
    add_history_to_context: bool | None = attrs.field(default=None, validator=_maybe_flag)
    add_dependencies_to_context: bool | None = attrs.field(default=None, validator=_maybe_flag)
    add_session_state_to_context: bool | None = attrs.field(default=None, validator=_maybe_flag)
    #: This run's steps logged at debug level (None: the agent's ``debug_mode``).
    debug_mode: bool | None = attrs.field(default=None, validator=_maybe_flag)
    #: The caller's other keywords (Agno's ``**kwargs``): the hooks take them by name.
    hook_arguments: Mapping[str, Any] = attrs.Factory(dict)
    #: Ailoy 0.2's run settings (inference, knowledge).
    config: AgentConfig | None = attrs.field(default=None)
    # -- how the caller reads it
    #: Typed events (`ferrule.agent.events`); None: the agent's ``stream``.
    stream: bool | None = None
    stream_events: bool | None = None
    #: A stream yields the `RunOutput` after its last item (Agno's).
    yield_run_output: bool | None = attrs.field(default=None, validator=_maybe_flag)
    #: `query`: the model reasons, no ``reasoning`` response is streamed (Ailoy's flag).
    ignore_reasoning_messages: bool = False
    #: Ailoy's deltas (`run_delta`) rather than whole messages.
    deltas: bool = False

    @config.validator
    def _check_config(self, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and not isinstance(value, AgentConfig):
            raise InvalidInputError(
                f"expected an AgentConfig, got {type(value).__name__}", field="config"
            )

    def given(self, *besides: str) -> list[str]:
        """The options set to something other than their default (``besides`` aside)."""

        def default(field: attrs.Attribute[Any]) -> Any:
            given: Any = field.default
            return given.factory() if isinstance(given, attrs.Factory) else given  # type: ignore[arg-type]

        return [
            field.name
            for field in attrs.fields(RunRequest)
            if field.name not in ("kind", "input", *besides)
            and getattr(self, field.name) != default(field)
        ]


@attrs.define(eq=False)
class Decisions:
    """How `Agent.continue_run` decides the calls a paused run waits for: ``requirements``
    passed back after `ToolConfirmation.confirm` / ``reject``, or ``confirm`` (True or
    False for all, or ``{tool_call_id: bool}``), with ``reason`` for refusals."""

    requirements: Sequence[ToolConfirmation] | None = None
    confirm: bool | Mapping[str, bool] | None = None
    reason: str | None = None
    #: Agno's ``updated_tools``: the run's `ToolExecution` s, decided in place.
    updated_tools: Sequence[ToolExecution] | None = None

    def apply(self, waiting: list[ToolConfirmation]) -> None:
        decided = {r.tool_call.id: r for r in self.requirements or ()}
        updated = {t.tool_call_id: t for t in self.updated_tools or () if t.tool_call_id}
        for requirement in waiting:
            call_id = requirement.tool_call.id
            if call_id in updated:
                _take_tool_execution(requirement, updated[call_id])
            elif call_id in decided:
                requirement.confirmed = decided[call_id].confirmed
                requirement.reason = decided[call_id].reason
                requirement.result = decided[call_id].result
                schema = decided[call_id].user_input_schema
                requirement.user_input_schema = schema or requirement.user_input_schema
            elif isinstance(self.confirm, bool):
                requirement.confirmed = self.confirm
                requirement.reason = None if self.confirm else self.reason
            elif isinstance(self.confirm, Mapping) and call_id in self.confirm:
                requirement.confirmed = bool(self.confirm[call_id])
                requirement.reason = None if requirement.confirmed else self.reason
            requirement.settle_user_input()  # every field given: the call may run
            if requirement.confirmed is None:
                raise InvalidInputError(
                    f"tool call {call_id!r} ({requirement.tool_call.name}) has no decision",
                    field="requirements",
                )


def _take_tool_execution(requirement: ToolConfirmation, tool: ToolExecution) -> None:
    """One waiting call as Agno's `ToolExecution` decides it: confirmed or not (with its
    note), an external call's result, the user's input (a run's stored calls, the kit's,
    carry only a result)."""
    schema = getattr(tool, "user_input_schema", None)
    confirmed = getattr(tool, "confirmed", None)
    if schema is not None:
        requirement.user_input_schema = schema
    if requirement.external_execution and tool.result is not None:
        requirement.set_external_execution_result(tool.result)
    elif confirmed is not None:
        requirement.confirmed = confirmed
        requirement.reason = None if confirmed else getattr(tool, "confirmation_note", None)


@attrs.frozen(kw_only=True)
class Continuation:
    """What `Agent.continue_run` was asked: resume the paused run ``run_id`` (of
    ``session_id`` and ``user_id`` when given) with these ``decisions``, read as
    ``stream`` / ``stream_events`` / ``yield_run_output`` say; the rest of the run with
    these ``dependencies``, ``knowledge_filters``, ``metadata`` and ``run_context`` (None:
    as it had them), ``debug_mode`` and the hooks' other keywords."""

    run_id: str
    decisions: Decisions
    stream: bool | None = None
    stream_events: bool | None = None
    user_id: str | None = None
    session_id: str | None = None
    run_context: RunContext | None = None
    knowledge_filters: Any = None
    dependencies: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    debug_mode: bool | None = None
    yield_run_output: bool = False
    hook_arguments: Mapping[str, Any] = attrs.Factory(dict)
    #: What is asked of an ended run (Agno 2.9's ``input``, ``continue_from``, ``fork``,
    #: ``regenerate``...): `Rerun.plain` when nothing.
    rerun: Rerun = attrs.Factory(Rerun)


#: The `Continuation` fields `Agent.continue_run` takes by the same name.
CONTINUATION_OPTIONS = frozenset(
    {
        "stream",
        "stream_events",
        "user_id",
        "session_id",
        "run_context",
        "knowledge_filters",
        "dependencies",
        "metadata",
        "debug_mode",
        "yield_run_output",
    }
)


def continuation_of_call(arguments: Mapping[str, Any]) -> Continuation:
    """`Agent.continue_run`'s arguments (its ``locals()``: each parameter by name) as a
    `Continuation`. The run is ``run_response`` (a paused `RunOutput`, whose requirements
    decide when no other decision is given; an ended one; or a run id) or ``run_id``; the
    call's other keywords are the hooks'."""
    options = {k: v for k, v in arguments.items() if k in CONTINUATION_OPTIONS}
    run_response, run_id = arguments["run_response"], arguments["run_id"]
    requirements, updated_tools = arguments["requirements"], arguments["updated_tools"]
    confirm = arguments["confirm"]
    if isinstance(run_response, str):
        run_response, run_id = None, run_id or run_response
    if run_response is not None:
        if not hasattr(run_response, "run_id"):
            raise InvalidInputError(
                f"expected a paused RunOutput or a run id, got {type(run_response).__name__}",
                field="run_response",
            )
        run_id = run_response.run_id
        if requirements is None and updated_tools is None and confirm is None:
            requirements = run_response.requirements
        if options["session_id"] is None:
            options["session_id"] = run_response.session_id
    if run_id is None:
        raise InvalidInputError(
            "continue_run needs the paused run: its RunOutput or run_id=", field="run_id"
        )
    decisions = Decisions(requirements, confirm, arguments["reason"], updated_tools)
    asked = {key: arguments[key] for key in RERUN_KEYS}
    rerun = rerun_of(asked, run_id, run_response)
    return Continuation(
        run_id=run_id,
        decisions=decisions,
        hook_arguments=dict(arguments["kwargs"]),
        rerun=rerun,
        **options,
    )
