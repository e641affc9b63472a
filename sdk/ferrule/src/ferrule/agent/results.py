"""What runs produce: the streamed `AgentResponse` and `MessageOutput`, the final
`RunOutput` with its metrics (Agno's `ferrule.metrics.RunMetrics`), a single step's
`StepResult`, and the `ToolConfirmation` a paused run waits for."""

from __future__ import annotations

import enum
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import attrs
from ferrule_kernel import FerruleError, InvalidInputError, error_from_dict
from ferrule_kit.content.messages import Message, ToolCall, converter
from ferrule_kit.stores.storage import ToolExecution

from ..knowledge.document import MessageReferences
from ..media import Audio, Image
from ..metrics import RunMetrics
from ..models.message import Message as AgnoMessage
from ..tools.function import UserInputField
from .deltas import FinishReason

ResponseType = Literal[
    "output_text", "reasoning", "tool_call", "tool_call_result", "error", "paused"
]
RunStatusName = Literal[
    "pending", "running", "completed", "paused", "error", "cancelled", "regenerated"
]


class RunStatus(str, enum.Enum):
    """A run's state, with Agno's member names (``run.status == RunStatus.completed``). Each
    member is its plain name too (``RunStatus.completed == "completed"``, ``str()`` and
    JSON give ``"completed"``), so code comparing with strings keeps working."""

    pending = "pending"
    running = "running"
    completed = "completed"
    paused = "paused"
    error = "error"
    cancelled = "cancelled"
    #: Replaced by a regenerated run (``continue_run(regenerate=True)``): kept, not history.
    regenerated = "regenerated"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def _missing_(cls, value: object) -> None:
        # Agno's values are upper case ("COMPLETED"); ferrule's are the names its storage
        # and wire keep: say so, rather than a bare "not a valid RunStatus"
        if isinstance(value, str) and value.isupper():
            if value.lower() in cls._value2member_map_:
                raise InvalidInputError(
                    f"ferrule's run statuses are lower case: RunStatus.{value.lower()} is "
                    f"{value.lower()!r}, not Agno's {value!r}; compare with the member",
                    field="status",
                )


def as_run_status(value: RunStatus | RunStatusName) -> RunStatus:
    """A status given by its name as the `RunStatus` member (an unknown name is a
    ValueError naming the known ones)."""
    try:
        return RunStatus(value)
    except ValueError:
        names = ", ".join(s.value for s in RunStatus)
        raise ValueError(f"unknown run status {value!r}; one of: {names}") from None


#: The type of a run's ``content``: ``str``, or the class of the agent's (or the run's)
#: ``output_schema`` (``dict[str, Any]`` for a JSON schema): ``Agent[OutputT]``,
#: ``RunOutput[OutputT]``.
OutputT = TypeVar("OutputT")


def _terminal(file: Any) -> tuple[Any, Callable[[str, str], str]]:
    """Where a response prints (``file``, else stdout) and how it colours text there (SGR
    codes on a terminal only)."""
    out = file if file is not None else sys.stdout
    color = hasattr(out, "isatty") and out.isatty()

    def paint(text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if color else text

    return out, paint


class ResponseContent(dict[str, Any]):
    """The content of a ``tool_call`` or ``tool_call_result`` response: a dict (so JSON,
    equality and ``content["name"]`` are a dict's), whose keys also read as attributes,
    nested dicts alike, as Ailoy 0.1's guide reads them (``resp.content.function.name``,
    ``resp.content.function.arguments.items()``). A result's ``content`` attribute is the
    tool message's parts, as Ailoy's ``ToolMessage.content`` (``[0].text``: the result
    as the model was sent it)."""

    def __init__(self, fields: dict[str, Any], content: list[Any] | None = None) -> None:
        super().__init__(fields)
        if content is not None:
            self.content = content

    def __getattr__(self, name: str) -> Any:
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(f"this response content has no {name!r}") from None
        return ResponseContent(value) if type(value) is dict else value


@attrs.define(slots=True)  # not frozen: a frozen class costs 4x as much to build, per chunk
class AgentResponse:
    """One streamed piece of a `query` run (see agent-guide): ``content`` is a string for
    ``output_text``, ``reasoning`` and ``error``, a dict for ``tool_call``,
    ``tool_call_result`` and ``paused``. An ``error`` or ``paused`` response is the last of
    its stream; ``error`` holds the typed error of an ``error`` response."""

    type: ResponseType
    role: Literal["assistant", "tool"]
    is_type_switched: bool
    content: Any
    error: FerruleError | None = attrs.field(default=None, eq=False)

    def print(self, file: Any = None) -> None:
        """Print the response as a terminal would show it: text as it streams, reasoning
        dimmed, tool calls and results as JSON, errors in red (colours only on a terminal)."""
        out, paint = _terminal(file)
        kind, content = self.type, self.content
        if kind == "output_text":
            if self.is_type_switched:
                out.write("\n")
            out.write(content)
        elif kind == "reasoning":
            if self.is_type_switched:
                out.write(paint("\n[reasoning]\n", "2"))
            out.write(paint(content, "2"))
        elif kind in ("tool_call", "tool_call_result", "paused"):
            label = {
                "tool_call": "tool call",
                "tool_call_result": "tool result",
                "paused": "paused",
            }[kind]
            out.write(paint(f"\n[{label}] ", "36") + json.dumps(content, ensure_ascii=False) + "\n")
        else:
            out.write(paint(f"\n[error] {content}\n", "31"))
        out.flush()


@attrs.define
class ToolConfirmation:
    """A tool call waiting for a human: `confirm` or `reject` it, then `Agent.continue_run`."""

    tool_call: ToolCall
    confirmed: bool | None = None
    reason: str | None = None
    #: The call is the caller's to run (a tool with ``external_execution``): its result is
    #: given with `set_external_execution_result` and sent to the model as the tool's.
    external_execution: bool = False
    result: Any = None
    #: The call's arguments, for a tool with ``requires_user_input``: the user sets the
    #: ``value`` of those still None (or `provide_user_input`); the call then runs with them.
    user_input_schema: list[UserInputField] | None = None

    @property
    def needs_confirmation(self) -> bool:
        return (
            not self.external_execution
            and self.user_input_schema is None
            and self.confirmed is None
        )

    @property
    def tool_execution(self) -> ToolExecution:
        """The waiting call as Agno's requirement shows it (``tool_execution.tool_name``,
        ``tool_args``, and the caller's ``result`` for an external execution)."""
        call = self.tool_call
        return ToolExecution(call.id, call.name, call.arguments, self.result)

    @property
    def needs_user_input(self) -> bool:
        """The call waits for arguments from the user (Agno's name)."""
        return (
            self.user_input_schema is not None
            and self.confirmed is None
            and any(f.value is None for f in self.user_input_schema)
        )

    def provide_user_input(self, values: dict[str, Any]) -> ToolConfirmation:
        """Set the fields' values by name (Agno's name); a name the call has not is refused."""
        fields = {f.name: f for f in self.user_input_schema or ()}
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise InvalidInputError(
                f"{self.tool_call.name} takes no user input named {', '.join(unknown)}",
                field="values",
            )
        for name, value in values.items():
            fields[name].value = value
        return self

    def settle_user_input(self) -> None:
        """A user-input call whose fields all have values counts as confirmed."""
        if self.confirmed is None and self.user_input_schema is not None:
            if all(f.value is not None for f in self.user_input_schema):
                self.confirmed = True

    def with_user_input(self, call: ToolCall) -> ToolCall:
        """``call`` with the user's values over the model's arguments."""
        given = {f.name: f.value for f in self.user_input_schema or () if f.value is not None}
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        return attrs.evolve(call, arguments={**arguments, **given})

    @property
    def needs_external_execution(self) -> bool:
        return self.external_execution and self.confirmed is None

    def set_external_execution_result(self, result: Any) -> ToolConfirmation:
        """The result of running the call outside the agent (Agno's name)."""
        self.confirmed, self.result = True, result
        return self

    @property
    def needs_user_feedback(self) -> bool:
        """False: ferrule's tools pause for a confirmation, the user's input or an external
        result, never for answers to feedback questions."""
        return False

    @property
    def external_execution_silent(self) -> bool:
        """False: the caller's result of an external call is sent to the model as is."""
        return False

    @property
    def pause_type(self) -> Literal["confirmation", "user_input", "external_execution"]:
        """What the call waits for (Agno's ``PauseType``)."""
        if self.external_execution:
            return "external_execution"
        if self.user_input_schema is not None:
            return "user_input"
        return "confirmation"

    def is_resolved(self) -> bool:
        """The call was decided: confirmed or rejected, its input or its result given."""
        return not (
            self.needs_confirmation or self.needs_user_input or self.needs_external_execution
        )

    def provide_user_feedback(self, selections: dict[str, list[str]]) -> None:
        """Refused as Agno refuses it for a call that asks no feedback questions (none of
        ferrule's does)."""
        raise InvalidInputError(
            f"{self.tool_call.name} waits for a {self.pause_type.replace('_', ' ')}, not for "
            "user feedback",
            field="selections",
        )

    def confirm(self) -> ToolConfirmation:
        self.confirmed, self.reason = True, None
        return self

    def reject(self, note: str | None = None) -> ToolConfirmation:
        """Refuse the call; ``note`` (kept as `reason`) tells the model why."""
        self.confirmed, self.reason = False, note
        return self

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tool_call_id": self.tool_call.id,
            "name": self.tool_call.name,
            "arguments": self.tool_call.arguments,
        }
        if self.user_input_schema is not None:
            out["user_input_schema"] = [f.to_dict() for f in self.user_input_schema]
        return out


@attrs.frozen(slots=True)
class MessageOutput:
    """One finished message of a stateless `Agent.run`: an assistant turn (with that model
    call's ``usage``) or a tool result. ``requirements`` is non-empty on the assistant
    message whose tool calls wait for confirmation; the run is then paused."""

    message: Message
    usage: dict[str, int] | None = None
    requirements: tuple[ToolConfirmation, ...] = ()
    #: Why the message ended (Ailoy's ``MessageOutput.finish_reason``): ``Stop()`` for
    #: a reply and a tool result, ``ToolCall()`` for a turn that called tools.
    finish_reason: FinishReason | None = None

    def print(self, file: Any = None) -> None:
        """Print the message as `AgentResponse.print` shows a run's pieces (what Ailoy 0.2's
        MCP guide's ``agent.print(resp)`` shows): its thinking dimmed, its text, each tool
        call and a tool's result as JSON."""
        out, paint = _terminal(file)
        message = self.message
        if message.thinking:
            out.write(paint(f"[reasoning]\n{message.thinking}\n", "2"))
        if message.role == "tool":
            out.write(paint("[tool result] ", "36") + message.text + "\n")
        elif message.text:
            out.write(message.text + "\n")
        for call in message.tool_calls:
            shown = {"id": call.id, "name": call.name, "arguments": call.arguments}
            out.write(paint("[tool call] ", "36") + json.dumps(shown, ensure_ascii=False) + "\n")
        out.flush()


#: Why iterating a `RunOutput` fails, and what to do instead.
NOT_A_STREAM = (
    "agent.run(...) returned the finished run, a RunOutput (Agno's run: the agent was built "
    "in Agno's form, Agent(model=...)), which is not a stream. Stream it with `for event in "
    "agent.run(input, stream=True)` (Agno's events) or `async for output in "
    "agent.arun(input)`; for Ailoy's stream of messages (`async for resp in "
    "agent.run(messages)`) build the agent as Ailoy 0.2 does: Agent(lm), a LangModel "
    "given first"
)


def _listed(value: list[Any] | None) -> list[Any]:
    return [] if value is None else value


def agno_messages(value: list[Any] | None) -> list[AgnoMessage]:
    """A run's messages in Agno's shape: the engine's (`ferrule_kit.content.messages.Message`) as
    `AgnoMessage.from_kit` shows them, Agno's as they are, and a dict of either (a
    `RunOutput.to_dict` of now, or of before, when it held the engine's)."""
    out: list[AgnoMessage] = []
    for message in value or ():
        if isinstance(message, dict):
            if "id" in message or "created_at" in message:  # Agno's, as `to_dict` writes it
                out.append(AgnoMessage.from_dict(message))
                continue
            message = converter.structure(message, Message)
        out.append(message if isinstance(message, AgnoMessage) else AgnoMessage.from_kit(message))
    calls = {c["id"]: c["function"] for m in out for c in m.tool_calls or () if "function" in c}
    for message in out:  # a tool result names its call's tool, as Agno's does
        call = calls.get(message.tool_call_id) if message.role == "tool" else None
        if call is not None and message.tool_name is None:
            message.tool_name = call.get("name")
            message.tool_args = _arguments(call.get("arguments"))
    return out


def _arguments(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text


def kit_messages(messages: list[AgnoMessage]) -> list[Message]:
    """A run's messages as the engine keeps them (each exactly the one shown, unless
    changed since)."""
    return [m.to_kit() for m in messages]


def _metrics(value: RunMetrics | None) -> RunMetrics:
    return RunMetrics() if value is None else value


def _mapping(value: dict[str, Any] | None) -> dict[str, Any]:
    return {} if value is None else value


def _media(cls: type[Any], value: Any) -> Any:
    """A stored run's image or audio (a `to_dict`) as the media object it was."""
    return cls.from_dict(value) if isinstance(value, dict) else value


def _now() -> int:
    return int(time.time())


def json_ready(value: Any) -> Any:
    """``value`` as JSON-ready data: a typed error, an enum, an object with ``to_dict``, a
    pydantic model or an attrs class by its fields (what ``to_dict`` of a run and its
    events hold)."""
    if isinstance(value, FerruleError):
        return value.to_dict()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        return to_dict()
    if hasattr(value, "model_dump") and not isinstance(value, type):
        return value.model_dump(mode="json")
    if attrs.has(type(value)):
        return converter.unstructure(value)
    return value


@attrs.define
class RunOutput(Generic[OutputT]):
    """What a run came to. ``content`` is the final text, or the validated object when the
    run has an ``output_schema`` (``content_type`` names its class; ``"str"`` for text);
    it is None while the run has not completed (paused, cancelled), and JSON for a run read
    back from a db. ``messages`` are the messages this run added, in Agno's shape
    (`ferrule.models.message.Message`: ``role``, ``content``, ``tool_calls``...; given the
    engine's, they are shown so). ``session_state`` is the
    session's state when the run ended; ``metadata`` the caller's (``run(...,
    metadata=...)``). Agno's other fields: ``agent_name``, ``model`` and ``model_provider``
    (the agent's first model), ``input`` (the `RunInput` the pre-hooks left),
    ``reasoning_content`` (the model's reasoning), ``tools`` (the calls run), ``created_at``
    (seconds), ``followups`` (with ``followups=True``), the fork / regenerate / checkpoint
    ids of a run continuing an ended one (`Agent.continue_run` with ``input``, ``fork``,
    ``regenerate``...), ``events`` (with ``store_events=True``: what a streamed run
    streamed, less ``events_to_skip``). ``error`` (ferrule's; Agno's has none) is the typed
    error of a run that failed (status ``error``, `failed_runs`) or was cancelled. Media outputs, a feature ferrule does not have,
    stay None."""

    # Every run the agent makes has an id; None only for one built by hand, as Agno's.
    run_id: str = None  # type: ignore[assignment]
    status: RunStatus = attrs.field(default=RunStatus.running, converter=as_run_status)
    # Typed as what a completed run holds, so that `agent.run(...).content` needs no
    # narrowing (as pydantic-ai's `output`); the None of other runs is the documented case.
    content: OutputT = None  # type: ignore[assignment]
    messages: list[AgnoMessage] = attrs.field(default=None, converter=agno_messages)
    metrics: RunMetrics = attrs.field(default=None, converter=_metrics)
    requirements: list[ToolConfirmation] = attrs.field(default=None, converter=_listed)
    error: FerruleError | None = None
    agent_id: str | None = None
    session_id: str | None = None
    user_id: str | None = None
    content_type: str = "str"
    session_state: dict[str, Any] | None = None
    metadata: dict[str, Any] = attrs.field(default=None, converter=_mapping)
    #: The knowledge searches the run made (``add_knowledge_to_context``, the model's
    #: ``search_knowledge_base`` calls), or None when it made none.
    references: list[MessageReferences] | None = None
    agent_name: str | None = None
    parent_run_id: str | None = None
    input: Any = None
    reasoning_content: str | None = None
    reasoning_steps: list[Any] | None = None
    reasoning_messages: list[Any] | None = None
    model_provider_data: dict[str, Any] | None = None
    model: str | None = None
    model_provider: str | None = None
    additional_input: list[Any] | None = None
    tools: list[ToolExecution] | None = None
    images: list[Any] | None = None
    videos: list[Any] | None = None
    audio: list[Any] | None = None
    files: list[Any] | None = None
    response_audio: Any = None
    citations: Any = None
    followups: list[str] | None = None
    created_at: int = attrs.Factory(_now)
    events: list[Any] | None = None
    last_checkpoint_at_message_index: int | None = None
    forked_from_run_id: str | None = None
    forked_from_message_index: int | None = None
    forked_from_session_id: str | None = None
    regenerated_from: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The run's fields that are set, as JSON-ready data (`from_dict` reads it back)."""
        out = {}
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if value is not None and value != [] and value != {}:
                out[field.name] = json_ready(value)
        if self.input is not None and hasattr(self.input, "input_content"):
            out["input"] = {"input_content": json_ready(self.input.input_content)}
        return out

    def to_json(self, separators: tuple[str, str] = (", ", ": "), indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), separators=separators, indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunOutput[Any]:
        """The run ``data`` (a `to_dict`) describes; its content comes back as JSON."""
        known = {f.name for f in attrs.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if isinstance(values.get("metrics"), dict):
            values["metrics"] = RunMetrics.from_dict(values["metrics"])
        if values.get("requirements") is not None:
            values["requirements"] = [
                ToolConfirmation(ToolCall(r["tool_call_id"], r["name"], r.get("arguments", {})))
                for r in values["requirements"]
            ]
        if isinstance(values.get("error"), dict):
            values["error"] = error_from_dict(values["error"])
        if values.get("tools") is not None:
            values["tools"] = converter.structure(values["tools"], list[ToolExecution])
        if values.get("references") is not None:
            values["references"] = converter.structure(
                values["references"], list[MessageReferences]
            )
        if values.get("images") is not None:
            values["images"] = [_media(Image, i) for i in values["images"]]
        if values.get("response_audio") is not None:
            values["response_audio"] = _media(Audio, values["response_audio"])
        return cls(**values)

    def get_content_as_string(self, **kwargs: Any) -> str:
        """The content as text: itself when text, else its JSON (``kwargs`` go to the JSON
        encoder: ``indent=2``)."""
        if isinstance(self.content, str):
            return self.content
        if hasattr(self.content, "model_dump_json"):
            return str(self.content.model_dump_json(exclude_none=True, **kwargs))
        kwargs.setdefault("ensure_ascii", False)
        return json.dumps(json_ready(self.content), **kwargs)

    if not TYPE_CHECKING:  # at run time only: to type checkers a RunOutput is neither

        def __iter__(self):
            raise TypeError(NOT_A_STREAM)

        def __aiter__(self):
            raise TypeError(NOT_A_STREAM)

        def __await__(self):
            raise TypeError(
                "a RunOutput is a finished run, not something to await: in async code "
                "`output = await agent.arun(input)` gives it"
            )

    @property
    def is_paused(self) -> bool:
        return self.status == "paused"

    @property
    def is_cancelled(self) -> bool:
        return self.status == "cancelled"

    @property
    def active_requirements(self) -> list[ToolConfirmation]:
        """The calls a paused run still waits on (Agno's name)."""
        return [r for r in self.requirements if not r.is_resolved()]

    @property
    def tools_requiring_confirmation(self) -> list[ToolConfirmation]:
        return [r for r in self.requirements if r.needs_confirmation]

    @property
    def tools_awaiting_external_execution(self) -> list[ToolConfirmation]:
        return [r for r in self.requirements if r.needs_external_execution]

    @property
    def tools_requiring_user_input(self) -> list[ToolConfirmation]:
        """The calls a paused run waits on for arguments from the user (Agno's name)."""
        return [r for r in self.requirements if r.needs_user_input]


@attrs.frozen
class StepResult:
    """One step (execute-agent-step-api): a final answer, or tool requests to run and send
    back as tool messages."""

    message: Message
    tool_requests: list[ToolCall]
    usage: dict[str, int] | None = None

    @property
    def is_final(self) -> bool:
        return not self.tool_requests

    @property
    def content(self) -> str:
        return self.message.text
