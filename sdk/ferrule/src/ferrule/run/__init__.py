"""Agno's ``agno.run``: a run's output, status and events (``from ferrule.run import
RunStatus``; the agent's run classes and events in `ferrule.run.agent`, cancelling a run by
id in `ferrule.run.cancel`, a paused run's `ferrule.run.requirement.RunRequirement`). The
classes live in `ferrule.agent.results` and `ferrule.agent.events`, where the agent builds
them."""

from __future__ import annotations

from .base import RunContext, RunStatus
from .cancel import get_cancellation_manager, set_cancellation_manager

__all__ = ["RunContext", "RunStatus", "get_cancellation_manager", "set_cancellation_manager"]
