"""Agno's ``agno.run.base``: `RunContext` (what a run is for, given to the functions that take ``run_context``) and `RunStatus`, a run's state (``"completed"``, ``"paused"``...)."""

from __future__ import annotations

from ..agent.results import RunStatus
from ..tools.context import RunContext

__all__ = ["RunContext", "RunStatus"]
