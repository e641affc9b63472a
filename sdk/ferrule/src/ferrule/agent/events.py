"""The typed events of ``Agent.run(input, stream=True)`` (Agno's ``agno.run.agent`` events:
``from ferrule.run.agent import RunContentEvent, RunEvent``); `sinks.EventSink` makes them
from a run, at the step of the turn loop each names.

With ``stream_events=True`` a run streams, in Agno's order: `PreHookStartedEvent` /
`PreHookCompletedEvent` for each pre-hook, `RunStartedEvent` (`RunContinuedEvent` when
`Agent.continue_run` resumes it), `ReasoningStartedEvent`, `ReasoningContentDeltaEvent`s and
`ReasoningCompletedEvent` when a reasoning model thinks first; for each model request
`CompressionStartedEvent` / `CompressionCompletedEvent` when the run's tool results are
compressed first (``compress_tool_results``), `ModelRequestStartedEvent`, the
`RunContentEvent`s of its reply (text in ``content``, reasoning in ``reasoning_content``)
and `ModelRequestCompletedEvent` (its tokens), then
`ToolCallStartedEvent` and `ToolCallCompletedEvent` for each tool call (and
`ToolCallErrorEvent` after a failed one's); `ParserModelResponseStartedEvent` /
`ParserModelResponseCompletedEvent` around a ``parser_model``, and
`OutputModelResponseStartedEvent` / `OutputModelResponseCompletedEvent` around an
``output_model`` (the main model's text then streams as `IntermediateRunContentEvent`s
instead); `FollowupsStartedEvent` /
`FollowupsCompletedEvent` with ``followups=True``; `RunContentCompletedEvent`;
`PostHookStartedEvent` / `PostHookCompletedEvent` for each post-hook;
`MemoryUpdateStartedEvent` / `MemoryUpdateCompletedEvent` and `SessionSummaryStartedEvent` /
`SessionSummaryCompletedEvent` when the session keeps memories or a summary; and it ends with
one of `RunCompletedEvent`, `RunPausedEvent` (a tool call waits for a human), `RunCancelledEvent`
or `RunErrorEvent`. Without it (Agno's default) only the `RunContentEvent`s and a final
`RunPausedEvent`, `RunCancelledEvent` or `RunErrorEvent` come, so that printing every event's
``content`` prints the reply once.

Every event has ``event`` (a `RunEvent` value, e.g. ``"RunContent"``), ``run_id``,
``agent_id``, ``agent_name``, ``session_id`` and ``created_at`` (whole seconds), and
`BaseRunOutputEvent`'s ``to_dict`` / ``to_json`` / ``from_dict``; `run_output_event_from_dict`
rebuilds any of them from its dict.
"""

from __future__ import annotations

import enum
import json
import time
from typing import Any, get_args

import attrs
from ferrule_kernel import FerruleError, InvalidInputError
from ferrule_kit.content.messages import converter
from ferrule_kit.stores.storage import ToolExecution

from ..metrics import RunMetrics
from .results import ToolConfirmation, json_ready


class RunEvent(str, enum.Enum):
    """The name of each event a run streams (an event's ``event``): compare
    ``chunk.event == RunEvent.run_content``."""

    run_started = "RunStarted"
    run_content = "RunContent"
    run_content_completed = "RunContentCompleted"
    run_intermediate_content = "RunIntermediateContent"
    run_completed = "RunCompleted"
    run_error = "RunError"
    run_cancelled = "RunCancelled"
    run_paused = "RunPaused"
    run_continued = "RunContinued"
    pre_hook_started = "PreHookStarted"
    pre_hook_completed = "PreHookCompleted"
    post_hook_started = "PostHookStarted"
    post_hook_completed = "PostHookCompleted"
    tool_call_started = "ToolCallStarted"
    tool_call_completed = "ToolCallCompleted"
    tool_call_error = "ToolCallError"
    reasoning_started = "ReasoningStarted"
    reasoning_step = "ReasoningStep"
    reasoning_content_delta = "ReasoningContentDelta"
    reasoning_completed = "ReasoningCompleted"
    memory_update_started = "MemoryUpdateStarted"
    memory_update_completed = "MemoryUpdateCompleted"
    session_summary_started = "SessionSummaryStarted"
    session_summary_completed = "SessionSummaryCompleted"
    parser_model_response_started = "ParserModelResponseStarted"
    parser_model_response_completed = "ParserModelResponseCompleted"
    output_model_response_started = "OutputModelResponseStarted"
    output_model_response_completed = "OutputModelResponseCompleted"
    model_request_started = "ModelRequestStarted"
    model_request_completed = "ModelRequestCompleted"
    compression_started = "CompressionStarted"
    compression_completed = "CompressionCompleted"
    followups_started = "FollowupsStarted"
    followups_completed = "FollowupsCompleted"
    custom_event = "CustomEvent"


def _now() -> int:
    return int(time.time())


@attrs.define(slots=False)
class BaseRunOutputEvent:
    """What every event of a run has: its dict and JSON, and whether it pauses or cancels
    the run."""

    def to_dict(self) -> dict[str, Any]:
        """The event's fields that are set, as JSON-ready data."""
        return {
            f.name: json_ready(value)
            for f in attrs.fields(type(self))
            if (value := getattr(self, f.name)) is not None
        }

    def to_json(self, separators: tuple[str, str] = (", ", ": "), indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), separators=separators, indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """The event of ``cls`` with ``data``'s fields (those it does not have left out)."""
        known = {f.name for f in attrs.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if isinstance(values.get("tools"), list):
            values["tools"] = [_tool(t) for t in values["tools"]]
        if isinstance(values.get("tool"), dict):
            values["tool"] = _tool(values["tool"])
        return cls(**values)

    @property
    def is_paused(self) -> bool:
        return False

    @property
    def is_cancelled(self) -> bool:
        return False


def _tool(data: Any) -> Any:
    return converter.structure(data, ToolExecution) if isinstance(data, dict) else data


@attrs.define(slots=False)
class BaseAgentRunEvent(BaseRunOutputEvent):
    """The fields every agent run event has (see the module docstring)."""

    created_at: int = attrs.Factory(_now)
    event: str = ""
    agent_id: str = ""
    agent_name: str = ""
    run_id: str | None = None
    parent_run_id: str | None = None
    session_id: str | None = None
    workflow_id: str | None = None
    workflow_run_id: str | None = None
    step_id: str | None = None
    step_name: str | None = None
    step_index: int | None = None
    nested_depth: int = 0
    tools: list[Any] | None = None
    content: Any = None

    @property
    def tools_requiring_confirmation(self) -> list[Any]:
        return [t for t in self.tools or () if getattr(t, "requires_confirmation", False)]

    @property
    def tools_requiring_user_input(self) -> list[Any]:
        return [t for t in self.tools or () if getattr(t, "requires_user_input", False)]

    @property
    def tools_awaiting_external_execution(self) -> list[Any]:
        return [t for t in self.tools or () if getattr(t, "external_execution_required", False)]


@attrs.define(slots=False)
class RunStartedEvent(BaseAgentRunEvent):
    """The run started, on ``model`` (its id) of ``model_provider``."""

    event: str = RunEvent.run_started.value
    model: str = ""
    model_provider: str = ""


@attrs.define(slots=False)
class RunContentEvent(BaseAgentRunEvent):
    """A piece of the reply: ``content`` (text) or ``reasoning_content``."""

    event: str = RunEvent.run_content.value
    content: Any = None
    workflow_agent: bool = False
    content_type: str = "str"
    reasoning_content: str | None = None
    model_provider_data: dict[str, Any] | None = None
    citations: Any = None
    response_audio: Any = None
    image: Any = None
    references: list[Any] | None = None
    additional_input: list[Any] | None = None
    reasoning_steps: list[Any] | None = None
    reasoning_messages: list[Any] | None = None


@attrs.define(slots=False)
class RunContentCompletedEvent(BaseAgentRunEvent):
    """The reply's content is complete (post-hooks, memories and storing follow)."""

    event: str = RunEvent.run_content_completed.value


@attrs.define(slots=False)
class IntermediateRunContentEvent(BaseAgentRunEvent):
    """Content of a run step that is not the final reply."""

    event: str = RunEvent.run_intermediate_content.value
    content: Any = None
    content_type: str = "str"


@attrs.define(slots=False)
class RunCompletedEvent(BaseAgentRunEvent):
    """The run completed: its ``content``, ``metrics`` and ``session_state``."""

    event: str = RunEvent.run_completed.value
    content: Any = None
    content_type: str = "str"
    reasoning_content: str | None = None
    citations: Any = None
    model_provider_data: dict[str, Any] | None = None
    images: list[Any] | None = None
    videos: list[Any] | None = None
    audio: list[Any] | None = None
    files: list[Any] | None = None
    response_audio: Any = None
    references: list[Any] | None = None
    additional_input: list[Any] | None = None
    reasoning_steps: list[Any] | None = None
    reasoning_messages: list[Any] | None = None
    metadata: dict[str, Any] | None = None
    metrics: RunMetrics | None = None
    session_state: dict[str, Any] | None = None


@attrs.define(slots=False)
class RunPausedEvent(BaseAgentRunEvent):
    """The run waits: decide each of ``requirements`` and call `Agent.continue_run`."""

    event: str = RunEvent.run_paused.value
    tools: list[Any] | None = None
    requirements: list[ToolConfirmation] | None = None

    @property
    def is_paused(self) -> bool:
        return True

    @property
    def active_requirements(self) -> list[ToolConfirmation]:
        """The requirements not decided yet."""
        return [
            r
            for r in self.requirements or ()
            if r.needs_confirmation or r.needs_user_input or r.needs_external_execution
        ]


@attrs.define(slots=False)
class RunContinuedEvent(BaseAgentRunEvent):
    """A paused run resumes (`Agent.continue_run`)."""

    event: str = RunEvent.run_continued.value


@attrs.define(slots=False)
class RunErrorEvent(BaseAgentRunEvent):
    """The run failed: ``content`` says why, ``error_type`` names the error's kind,
    ``additional_data`` holds its fields and ``error`` is the typed error itself."""

    event: str = RunEvent.run_error.value
    content: str | None = None
    error_type: str | None = None
    error_id: str | None = None
    additional_data: dict[str, Any] | None = None
    error: FerruleError | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        # the typed error stays with the run that raised it: its dict is additional_data
        return super().from_dict({k: v for k, v in data.items() if k != "error"})


@attrs.define(slots=False)
class RunCancelledEvent(BaseAgentRunEvent):
    """The run was cancelled (`Agent.cancel_run`); ``reason`` says so."""

    event: str = RunEvent.run_cancelled.value
    reason: str | None = None

    @property
    def is_cancelled(self) -> bool:
        return True


@attrs.define(slots=False)
class PreHookStartedEvent(BaseAgentRunEvent):
    event: str = RunEvent.pre_hook_started.value
    pre_hook_name: str | None = None
    run_input: Any = None


@attrs.define(slots=False)
class PreHookCompletedEvent(BaseAgentRunEvent):
    """A pre-hook ran; ``run_input`` is the input as it left it."""

    event: str = RunEvent.pre_hook_completed.value
    pre_hook_name: str | None = None
    run_input: Any = None


@attrs.define(slots=False)
class PostHookStartedEvent(BaseAgentRunEvent):
    event: str = RunEvent.post_hook_started.value
    post_hook_name: str | None = None


@attrs.define(slots=False)
class PostHookCompletedEvent(BaseAgentRunEvent):
    event: str = RunEvent.post_hook_completed.value
    post_hook_name: str | None = None


@attrs.define(slots=False)
class MemoryUpdateStartedEvent(BaseAgentRunEvent):
    event: str = RunEvent.memory_update_started.value


@attrs.define(slots=False)
class MemoryUpdateCompletedEvent(BaseAgentRunEvent):
    """The user's memories after the run's update (``memories``)."""

    event: str = RunEvent.memory_update_completed.value
    memories: list[Any] | None = None


@attrs.define(slots=False)
class SessionSummaryStartedEvent(BaseAgentRunEvent):
    event: str = RunEvent.session_summary_started.value


@attrs.define(slots=False)
class SessionSummaryCompletedEvent(BaseAgentRunEvent):
    """The session's new summary (None when it could not be made)."""

    event: str = RunEvent.session_summary_completed.value
    session_summary: Any = None


@attrs.define(slots=False)
class ReasoningStartedEvent(BaseAgentRunEvent):
    event: str = RunEvent.reasoning_started.value


@attrs.define(slots=False)
class ReasoningStepEvent(BaseAgentRunEvent):
    """One step of a reasoning agent's chain (``content``: the step)."""

    event: str = RunEvent.reasoning_step.value
    content: Any = None
    content_type: str = "str"
    reasoning_content: str = ""


@attrs.define(slots=False)
class ReasoningContentDeltaEvent(BaseAgentRunEvent):
    """A piece of the reasoning model's thinking, as it streams."""

    event: str = RunEvent.reasoning_content_delta.value
    reasoning_content: str = ""


@attrs.define(slots=False)
class ReasoningCompletedEvent(BaseAgentRunEvent):
    """The reasoning model is done: ``content`` is its whole thinking."""

    event: str = RunEvent.reasoning_completed.value
    content: Any = None
    content_type: str = "str"


@attrs.define(slots=False)
class ToolCallStartedEvent(BaseAgentRunEvent):
    event: str = RunEvent.tool_call_started.value
    tool: ToolExecution | None = None


@attrs.define(slots=False)
class ToolCallCompletedEvent(BaseAgentRunEvent):
    """``tool.result`` holds the tool's result (``tool.error`` when it failed); ``content``
    is the result as the model reads it."""

    event: str = RunEvent.tool_call_completed.value
    tool: ToolExecution | None = None
    content: Any = None
    images: list[Any] | None = None
    videos: list[Any] | None = None
    audio: list[Any] | None = None
    files: list[Any] | None = None


@attrs.define(slots=False)
class ToolCallErrorEvent(BaseAgentRunEvent):
    """A tool call failed (after its `ToolCallCompletedEvent`): ``error`` says how."""

    event: str = RunEvent.tool_call_error.value
    tool: ToolExecution | None = None
    error: str | None = None


@attrs.define(slots=False)
class ParserModelResponseStartedEvent(BaseAgentRunEvent):
    event: str = RunEvent.parser_model_response_started.value


@attrs.define(slots=False)
class ParserModelResponseCompletedEvent(BaseAgentRunEvent):
    event: str = RunEvent.parser_model_response_completed.value


@attrs.define(slots=False)
class OutputModelResponseStartedEvent(BaseAgentRunEvent):
    event: str = RunEvent.output_model_response_started.value


@attrs.define(slots=False)
class OutputModelResponseCompletedEvent(BaseAgentRunEvent):
    event: str = RunEvent.output_model_response_completed.value


@attrs.define(slots=False)
class ModelRequestStartedEvent(BaseAgentRunEvent):
    """A request to ``model`` (its id) of ``model_provider`` is sent."""

    event: str = RunEvent.model_request_started.value
    model: str | None = None
    model_provider: str | None = None


@attrs.define(slots=False)
class ModelRequestCompletedEvent(BaseAgentRunEvent):
    """A model request's reply is complete: its tokens and its time to the first one."""

    event: str = RunEvent.model_request_completed.value
    model: str | None = None
    model_provider: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    time_to_first_token: float | None = None
    reasoning_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


@attrs.define(slots=False)
class CompressionStartedEvent(BaseAgentRunEvent):
    """The run's tool results are about to be compressed (`ferrule.compression`)."""

    event: str = RunEvent.compression_started.value


@attrs.define(slots=False)
class CompressionCompletedEvent(BaseAgentRunEvent):
    """Tool results were compressed: the manager's ``stats`` so far (results compressed,
    their characters before and after)."""

    event: str = RunEvent.compression_completed.value
    tool_results_compressed: int | None = None
    original_size: int | None = None
    compressed_size: int | None = None


@attrs.define(slots=False)
class FollowupsStartedEvent(BaseAgentRunEvent):
    event: str = RunEvent.followups_started.value


@attrs.define(slots=False)
class FollowupsCompletedEvent(BaseAgentRunEvent):
    """The follow-up prompts suggested after the reply (None when none could be made)."""

    event: str = RunEvent.followups_completed.value
    followups: list[str] | None = None


@attrs.define(slots=False, init=False)
class CustomEvent(BaseAgentRunEvent):
    """An event of one's own, which a tool yields (a generator tool; ``tool_call_id``
    names its call): streamed as it is, after the call's `ToolCallStartedEvent`, with or
    without ``stream_events``. Subclass it (a dataclass or attrs class, or plain keyword
    fields: ``CustomEvent(progress=0.5)``) to give it fields."""

    event: str = RunEvent.custom_event.value
    tool_call_id: str | None = None

    def __init__(self, **kwargs: Any) -> None:
        self.__attrs_init__()  # type: ignore[attr-defined]
        for key, value in kwargs.items():
            setattr(self, key, value)

    def __post_init__(self) -> None:
        # a dataclass subclass's __init__ sets its own fields only: the rest take defaults
        for field in attrs.fields(CustomEvent):
            if field.name not in vars(self):
                default: Any = field.default
                factory = getattr(default, "factory", None)
                setattr(self, field.name, factory() if callable(factory) else default)

    def to_dict(self) -> dict[str, Any]:
        """Its fields and its own (those of a subclass, or given by keyword) that are set."""
        fields = {k: v for k, v in vars(self).items() if not k.startswith("_") and v is not None}
        return {k: json_ready(v) for k, v in {**super().to_dict(), **fields}.items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        return cls(**data)


RunOutputEvent = (
    RunStartedEvent
    | RunContentEvent
    | IntermediateRunContentEvent
    | RunContentCompletedEvent
    | RunCompletedEvent
    | RunErrorEvent
    | RunCancelledEvent
    | RunPausedEvent
    | RunContinuedEvent
    | PreHookStartedEvent
    | PreHookCompletedEvent
    | PostHookStartedEvent
    | PostHookCompletedEvent
    | ReasoningStartedEvent
    | ReasoningStepEvent
    | ReasoningContentDeltaEvent
    | ReasoningCompletedEvent
    | MemoryUpdateStartedEvent
    | MemoryUpdateCompletedEvent
    | SessionSummaryStartedEvent
    | SessionSummaryCompletedEvent
    | ToolCallStartedEvent
    | ToolCallCompletedEvent
    | ToolCallErrorEvent
    | ParserModelResponseStartedEvent
    | ParserModelResponseCompletedEvent
    | OutputModelResponseStartedEvent
    | OutputModelResponseCompletedEvent
    | ModelRequestStartedEvent
    | ModelRequestCompletedEvent
    | CompressionStartedEvent
    | CompressionCompletedEvent
    | FollowupsStartedEvent
    | FollowupsCompletedEvent
    | CustomEvent
)

#: Each event's class by its ``event`` name.
RUN_EVENT_TYPE_REGISTRY: dict[str, type[BaseAgentRunEvent]] = {}
for _cls in get_args(RunOutputEvent):
    # the name readable on the class too (``RunContentEvent.event``), as on Agno's
    _cls.event = attrs.fields(_cls).event.default  # type: ignore[misc]
    RUN_EVENT_TYPE_REGISTRY[_cls.event] = _cls


def run_output_event_from_dict(data: dict[str, Any]) -> BaseRunOutputEvent:
    """The event ``data`` (a `BaseRunOutputEvent.to_dict`) describes, by its ``event``."""
    name = data.get("event")
    cls = RUN_EVENT_TYPE_REGISTRY.get(name) if isinstance(name, str) else None
    if cls is None:
        known = ", ".join(sorted(RUN_EVENT_TYPE_REGISTRY))
        raise InvalidInputError(f"unknown event {name!r}; one of: {known}", field="event")
    event: BaseRunOutputEvent = cls.from_dict(data)
    return event
