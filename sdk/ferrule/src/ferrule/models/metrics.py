"""Agno's ``agno.models.metrics``: the metrics classes of `ferrule.metrics`, where they live."""

from __future__ import annotations

from ..metrics import (
    BaseMetrics,
    MessageMetrics,
    Metrics,
    ModelMetrics,
    ModelType,
    RunMetrics,
    SessionMetrics,
    ToolCallMetrics,
    accumulate_model_metrics,
    merge_background_metrics,
)

__all__ = [
    "BaseMetrics",
    "MessageMetrics",
    "Metrics",
    "ModelMetrics",
    "ModelType",
    "RunMetrics",
    "SessionMetrics",
    "ToolCallMetrics",
    "accumulate_model_metrics",
    "merge_background_metrics",
]
