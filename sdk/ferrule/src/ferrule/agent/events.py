"""The typed events of ``Agent.run(input, stream=True)`` (the Agent reference's
``RunOutputEvent``); `sinks.EventSink` makes them from a run.

With ``stream_events=True`` a run streams `RunStartedEvent`, then `RunContentEvent`s (text
in ``content``, reasoning in ``reasoning_content``) and, for each tool call,
`ToolCallStartedEvent` and `ToolCallCompletedEvent`; it ends with one of
`RunCompletedEvent`, `RunPausedEvent` (a tool call waits for a human:
`Agent.continue_run`) or `RunErrorEvent`. Without it (Agno's default) only the
`RunContentEvent`s and a final `RunPausedEvent` or `RunErrorEvent` come, so that printing
every event's ``content`` prints the reply once. Every event has ``event`` (its name,
e.g. ``"RunContent"``), ``run_id``, ``agent_id``, ``session_id`` and ``created_at``.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import attrs
from ferrule_kernel import FerruleError
from ferrule_kit.storage import ToolExecution

from .results import RunMetrics, ToolConfirmation


@attrs.define(kw_only=True)
class RunEvent:
    event: ClassVar[str] = "RunEvent"
    # The events' names under Agno's ``RunEvent`` members (``chunk.event ==
    # RunEvent.run_content``), for the events ferrule streams.
    run_started: ClassVar[str] = "RunStarted"
    run_content: ClassVar[str] = "RunContent"
    run_completed: ClassVar[str] = "RunCompleted"
    run_error: ClassVar[str] = "RunError"
    run_paused: ClassVar[str] = "RunPaused"
    tool_call_started: ClassVar[str] = "ToolCallStarted"
    tool_call_completed: ClassVar[str] = "ToolCallCompleted"
    run_id: str
    agent_id: str | None = None
    session_id: str | None = None
    created_at: float = attrs.Factory(time.time)


@attrs.define(kw_only=True)
class RunStartedEvent(RunEvent):
    event: ClassVar[str] = "RunStarted"


@attrs.define(kw_only=True)
class RunContentEvent(RunEvent):
    """A piece of the reply: ``content`` (text) or ``reasoning_content``."""

    event: ClassVar[str] = "RunContent"
    content: str | None = None
    reasoning_content: str | None = None
    content_type: str = "str"


@attrs.define(kw_only=True)
class ToolCallStartedEvent(RunEvent):
    event: ClassVar[str] = "ToolCallStarted"
    tool: ToolExecution


@attrs.define(kw_only=True)
class ToolCallCompletedEvent(RunEvent):
    """``tool.result`` holds the tool's result (``tool.error`` when it failed)."""

    event: ClassVar[str] = "ToolCallCompleted"
    tool: ToolExecution


@attrs.define(kw_only=True)
class RunPausedEvent(RunEvent):
    """The run waits: decide each of ``requirements`` and call `Agent.continue_run`."""

    event: ClassVar[str] = "RunPaused"
    requirements: list[ToolConfirmation] = attrs.Factory(list)


@attrs.define(kw_only=True)
class RunCompletedEvent(RunEvent):
    event: ClassVar[str] = "RunCompleted"
    content: Any = None
    content_type: str = "str"
    metrics: RunMetrics | None = None
    session_state: dict[str, Any] | None = None


@attrs.define(kw_only=True)
class RunErrorEvent(RunEvent):
    """The run failed: ``content`` says why, ``error`` is the typed error."""

    event: ClassVar[str] = "RunError"
    content: str
    error: FerruleError


RunOutputEvent = (
    RunStartedEvent
    | RunContentEvent
    | ToolCallStartedEvent
    | ToolCallCompletedEvent
    | RunPausedEvent
    | RunCompletedEvent
    | RunErrorEvent
)
