"""Agno's ``agno.db.schemas.metrics``: no record of its own here (a run's metrics are kept
with the run: `ferrule.metrics.RunMetrics`)."""

from __future__ import annotations

__all__: list[str] = []
