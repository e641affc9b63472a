"""Agno's ``agno.run.agent``: an agent run's output, the events of a streamed run
(``from ferrule.run.agent import RunOutput, RunContentEvent``) and `RunInput`, the run's
input as its pre-hooks see it (the kit's: guardrail plugins read it too). Compare an event's
``event`` with `RunEvent`'s names (``RunEvent.run_content``) or test its class."""

from __future__ import annotations

from ferrule_kit.guardrails import RunInput

from ..agent.events import (
    RunCompletedEvent,
    RunContentEvent,
    RunErrorEvent,
    RunEvent,
    RunOutputEvent,
    RunPausedEvent,
    RunStartedEvent,
    ToolCallCompletedEvent,
    ToolCallStartedEvent,
)
from ..agent.results import RunMetrics, RunOutput, RunStatus

__all__ = [
    "RunCompletedEvent",
    "RunContentEvent",
    "RunErrorEvent",
    "RunEvent",
    "RunInput",
    "RunMetrics",
    "RunOutput",
    "RunOutputEvent",
    "RunPausedEvent",
    "RunStartedEvent",
    "RunStatus",
    "ToolCallCompletedEvent",
    "ToolCallStartedEvent",
]
