"""Agno's ``agno.run.base``: `RunStatus`, a run's state (``"completed"``, ``"paused"``...)."""

from __future__ import annotations

from ..agent.results import RunStatus

__all__ = ["RunStatus"]
