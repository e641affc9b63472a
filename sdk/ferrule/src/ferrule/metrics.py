"""Agno's metrics of model calls, messages, tool calls, runs and sessions (``from
ferrule.metrics import RunMetrics``; also ``ferrule.models.metrics``).

Every metric counts tokens the same way (`BaseMetrics`: input, output, total, audio, cache
reads and writes, reasoning, and an optional cost). `ModelMetrics` is one model's share,
keyed by provider and id; `RunMetrics.details` and `SessionMetrics.details` hold a list of
them per `ModelType` (``"model"``, ``"memory_model"``...). Adding two metrics (``a + b``, or
``sum([...])``) sums their counts, costs and durations and merges their details by model;
``to_dict()`` leaves out what is zero or unset, and ``from_dict`` ignores keys it does not
know. Timers measure with `time.perf_counter`.

A run's `RunMetrics` (``RunOutput.metrics``) is filled as Agno fills it: the run's model
under ``"model"``, and each helper model's calls (memory, session summary, reasoning,
parser, output, follow-ups, compression) under its own `ModelType`, all counted in the
totals. ferrule adds two fields of its own: ``model_calls``, one `ModelCallMetrics` per call
of the run's model (and its output model) in order, and ``tool_calls``, how many tool calls
the run ran. `RunMetrics.from_dict` also reads a run stored by ferrule before it kept Agno's
totals (only ``model_calls``, ``tool_calls``, ``duration``): the totals are summed from the
calls.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

if TYPE_CHECKING:
    from .models.response import ModelResponse

__all__ = [
    "BaseMetrics",
    "MessageMetrics",
    "Metrics",
    "ModelCallMetrics",
    "ModelMetrics",
    "ModelType",
    "RunMetrics",
    "SessionMetrics",
    "Timer",
    "ToolCallMetrics",
    "accumulate_model_metrics",
    "add_helper_metrics",
    "add_model_usage",
    "merge_background_metrics",
]

#: The token counters every metric has, in the order they are shown.
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "audio_input_tokens",
    "audio_output_tokens",
    "audio_total_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)

MetricsT = TypeVar("MetricsT", bound="BaseMetrics")


class ModelType(str, enum.Enum):
    """What a model does in a run: the keys of `RunMetrics.details`."""

    MODEL = "model"
    OUTPUT_MODEL = "output_model"
    PARSER_MODEL = "parser_model"
    MEMORY_MODEL = "memory_model"
    REASONING_MODEL = "reasoning_model"
    SESSION_SUMMARY_MODEL = "session_summary_model"
    CULTURE_MODEL = "culture_model"
    LEARNING_MODEL = "learning_model"
    COMPRESSION_MODEL = "compression_model"
    FOLLOWUP_MODEL = "followup_model"


class Timer:
    """A stopwatch: ``elapsed`` runs from `start` until `stop`."""

    def __init__(self) -> None:
        self.start_time: float | None = None
        self.end_time: float | None = None
        self.elapsed_time: float | None = None

    @property
    def elapsed(self) -> float:
        if self.elapsed_time is not None:
            return self.elapsed_time
        return time.perf_counter() - self.start_time if self.start_time is not None else 0.0

    def start(self) -> float:
        self.start_time = time.perf_counter()
        self.elapsed_time = None
        return self.start_time

    def stop(self) -> float:
        self.end_time = time.perf_counter()
        if self.start_time is not None:
            self.elapsed_time = self.end_time - self.start_time
        return self.end_time

    def __enter__(self) -> Timer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _shown(value: Any) -> bool:
    """Whether ``to_dict`` keeps a value: not None, not a zero count, not empty."""
    if value is None or isinstance(value, Timer):
        return False
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        return False
    return not (isinstance(value, (dict, list)) and not value)


def _sum_optional(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b


def _merge_numbers(
    into: dict[str, Any] | None, other: dict[str, Any] | None
) -> dict[str, Any] | None:
    """``other``'s entries into a copy of ``into``: numbers summed, anything else replaced."""
    if into is None and other is None:
        return None
    merged = dict(into or {})
    for key, value in (other or {}).items():
        current = merged.get(key)
        numeric = (int, float)
        if isinstance(current, numeric) and isinstance(value, numeric):
            merged[key] = current + value
        else:
            merged[key] = value
    return merged


@attrs.define
class BaseMetrics:
    """Tokens counted by kind, and what they cost (when the provider says)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    audio_input_tokens: int = 0
    audio_output_tokens: int = 0
    audio_total_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost: float | None = None

    def add_tokens(self, other: BaseMetrics) -> None:
        """``other``'s token counts and cost added to these."""
        for name in TOKEN_FIELDS:
            setattr(self, name, getattr(self, name) + (getattr(other, name, 0) or 0))
        self.cost = _sum_optional(self.cost, getattr(other, "cost", None))

    def to_dict(self) -> dict[str, Any]:
        """The set values (no zero counts, no timer)."""
        out = {}
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if field.name == "details" and value:
                value = {kind: [m.to_dict() for m in items] for kind, items in value.items()}
            if _shown(value):
                out[field.name] = value
        return out

    @classmethod
    def from_dict(cls: type[MetricsT], data: dict[str, Any]) -> MetricsT:
        """The metrics of a dict (``to_dict``'s, or a stored one); unknown keys ignored."""
        known = {f.name for f in attrs.fields(cls) if f.name != "timer"}
        values = {k: v for k, v in data.items() if k in known}
        if isinstance(values.get("details"), dict):
            values["details"] = {
                kind: [ModelMetrics.from_dict(m) if isinstance(m, dict) else m for m in items]
                for kind, items in values["details"].items()
                if isinstance(items, list)
            } or None
        elif "details" in values:
            values.pop("details")
        return cls(**values)


@attrs.define
class ModelMetrics(BaseMetrics):
    """One model's tokens (by provider and id) within a run or a session."""

    id: str = ""
    provider: str = ""
    provider_metrics: dict[str, Any] | None = None

    def accumulate(self, other: ModelMetrics) -> None:
        """``other``'s counts, cost and provider metrics added to these."""
        self.add_tokens(other)
        if other.provider_metrics is not None:
            self.provider_metrics = _merge_numbers(self.provider_metrics, other.provider_metrics)


def _merged_details(
    *sources: dict[str, list[ModelMetrics]] | None,
) -> dict[str, list[ModelMetrics]] | None:
    """The details of several metrics, one entry per model type and (provider, id)."""
    if not any(sources):
        return None
    merged: dict[str, dict[tuple[str, str], ModelMetrics]] = {}
    for details in sources:
        for kind, items in (details or {}).items():
            by_model = merged.setdefault(kind, {})
            for item in items:
                key = (item.provider, item.id)
                if key in by_model:
                    by_model[key].accumulate(item)
                else:
                    by_model[key] = ModelMetrics.from_dict(item.to_dict())
    return {kind: list(by_model.values()) for kind, by_model in merged.items()}


def _timed_start(self: Any) -> None:
    if self.timer is None:
        self.timer = Timer()
    self.timer.start()


def _timed_stop(self: Any, set_duration: bool) -> None:
    if self.timer is not None:
        self.timer.stop()
        if set_duration:
            self.duration = self.timer.elapsed


@attrs.define
class ToolCallMetrics:
    """When a tool call ran and how long it took."""

    timer: Timer | None = None
    start_time: float | None = None
    end_time: float | None = None
    duration: float | None = None

    def start_timer(self) -> None:
        _timed_start(self)
        if self.start_time is None:
            self.start_time = time.time()

    def stop_timer(self, set_duration: bool = True) -> None:
        _timed_stop(self, set_duration)
        if self.end_time is None:
            self.end_time = time.time()

    def to_dict(self) -> dict[str, Any]:
        names = ("start_time", "end_time", "duration")
        return {n: getattr(self, n) for n in names if _shown(getattr(self, n))}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCallMetrics:
        """The metrics of a dict; a time may be an ISO date (as some stores keep it)."""
        values: dict[str, Any] = {}
        for name in ("start_time", "end_time", "duration"):
            value = data.get(name)
            if isinstance(value, str):
                try:
                    value = datetime.fromisoformat(value).timestamp()
                except ValueError:
                    try:
                        value = float(value)
                    except ValueError:
                        value = None
            values[name] = value
        return cls(**values)


@attrs.define
class MessageMetrics(BaseMetrics):
    """One message's tokens and timing (``Message.metrics``)."""

    timer: Timer | None = None
    duration: float | None = None
    time_to_first_token: float | None = None
    provider_metrics: dict[str, Any] | None = None

    def start_timer(self) -> None:
        _timed_start(self)

    def stop_timer(self, set_duration: bool = True) -> None:
        _timed_stop(self, set_duration)

    def set_time_to_first_token(self) -> None:
        if self.timer is not None and self.time_to_first_token is None:
            self.time_to_first_token = self.timer.elapsed

    def __add__(self, other: MessageMetrics) -> MessageMetrics:
        result = MessageMetrics(timer=self.timer)
        result.add_tokens(self)
        result.add_tokens(other)
        result.duration = _sum_optional(self.duration, other.duration)
        result.time_to_first_token = (
            self.time_to_first_token
            if self.time_to_first_token is not None
            else other.time_to_first_token
        )
        result.provider_metrics = _merge_numbers(self.provider_metrics, other.provider_metrics)
        return result

    def __radd__(self, other: Any) -> MessageMetrics:
        return self if other == 0 else self + other


@attrs.define
class ModelCallMetrics:
    """ferrule's record of one model call of a run: its tokens, how long it took
    (``latency``; ``time_to_first_token``: to its first delta) and why it ended."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int | None = None
    latency: float = 0.0
    time_to_first_token: float | None = None
    finish_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.define
class RunMetrics(BaseMetrics):
    """A run's tokens and timing, with each model's share in ``details``; ferrule's own
    ``model_calls`` (each call of the run's model) and ``tool_calls`` (how many ran)."""

    timer: Timer | None = None
    time_to_first_token: float | None = None
    duration: float | None = None
    details: dict[str, list[ModelMetrics]] | None = None
    additional_metrics: dict[str, Any] | None = None
    model_calls: list[ModelCallMetrics] = attrs.Factory(list)
    tool_calls: int = 0

    def start_timer(self) -> None:
        _timed_start(self)

    def stop_timer(self, set_duration: bool = True) -> None:
        _timed_stop(self, set_duration)

    def set_time_to_first_token(self) -> None:
        if self.timer is not None and self.time_to_first_token is None:
            self.time_to_first_token = self.timer.elapsed

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if self.model_calls:
            out["model_calls"] = [call.to_dict() for call in self.model_calls]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunMetrics:
        """The metrics of a dict (``to_dict``'s, a stored run's, or a run stored before
        ferrule kept Agno's totals: those are then summed from its ``model_calls``)."""
        known = {f.name for f in attrs.fields(ModelCallMetrics)}
        calls = [
            ModelCallMetrics(**{k: v for k, v in call.items() if k in known})
            for call in data.get("model_calls") or ()
            if isinstance(call, dict)
        ]
        metrics = super().from_dict({k: v for k, v in data.items() if k != "model_calls"})
        metrics.model_calls = calls
        if calls and not any(name in data for name in TOKEN_FIELDS):
            metrics.input_tokens = sum(c.input_tokens for c in calls)
            metrics.output_tokens = sum(c.output_tokens for c in calls)
            metrics.reasoning_tokens = sum(c.reasoning_tokens or 0 for c in calls)
            metrics.total_tokens = metrics.input_tokens + metrics.output_tokens
        return metrics

    def __add__(self, other: RunMetrics) -> RunMetrics:
        result = RunMetrics(timer=self.timer)
        result.add_tokens(self)
        result.add_tokens(other)
        result.details = _merged_details(self.details, other.details)
        result.duration = _sum_optional(self.duration, other.duration)
        firsts = [t for t in (self.time_to_first_token, other.time_to_first_token) if t is not None]
        result.time_to_first_token = min(firsts) if firsts else None
        result.additional_metrics = _merge_numbers(
            self.additional_metrics, other.additional_metrics
        )
        result.model_calls = [*self.model_calls, *getattr(other, "model_calls", ())]
        result.tool_calls = self.tool_calls + getattr(other, "tool_calls", 0)
        return result

    def __radd__(self, other: Any) -> RunMetrics:
        return self if other == 0 else self + other


#: Agno's older name of `RunMetrics`.
Metrics = RunMetrics


@attrs.define
class SessionMetrics(BaseMetrics):
    """A session's tokens, summed over its runs, with each model's share in ``details``."""

    details: dict[str, list[ModelMetrics]] | None = None
    additional_metrics: dict[str, Any] | None = None

    def accumulate_from_run(self, run_metrics: RunMetrics) -> None:
        """A run's metrics added to the session's."""
        self.add_tokens(run_metrics)
        self.additional_metrics = _merge_numbers(
            self.additional_metrics, run_metrics.additional_metrics
        )
        if run_metrics.details:
            self.details = _merged_details(self.details, run_metrics.details)

    def __add__(self, other: SessionMetrics) -> SessionMetrics:
        result = SessionMetrics()
        result.add_tokens(self)
        result.add_tokens(other)
        result.details = _merged_details(self.details, other.details)
        result.additional_metrics = _merge_numbers(
            self.additional_metrics, other.additional_metrics
        )
        return result

    def __radd__(self, other: Any) -> SessionMetrics:
        return self if other == 0 else self + other


def accumulate_model_metrics(
    model_response: ModelResponse,
    model: Any,
    model_type: ModelType | str,
    run_metrics: RunMetrics | None = None,
) -> None:
    """A model response's usage added to ``run_metrics``: to its totals and to the entry of
    ``model`` (its provider and id) under ``model_type`` in its details."""
    usage = model_response.response_usage
    if run_metrics is None or usage is None:
        return
    share = ModelMetrics(id=model.id, provider=model.get_provider())
    share.add_tokens(usage)
    share.provider_metrics = getattr(usage, "provider_metrics", None)
    kind = model_type.value if isinstance(model_type, ModelType) else str(model_type)
    run_metrics.details = _merged_details(run_metrics.details, {kind: [share]})
    run_metrics.add_tokens(share)


def merge_background_metrics(
    run_metrics: RunMetrics | None, background_metrics: Sequence[RunMetrics | None]
) -> None:
    """The metrics of work done beside a run (memory, summaries) added into the run's."""
    if run_metrics is None:
        return
    for other in background_metrics:
        if other is None:
            continue
        run_metrics.add_tokens(other)
        run_metrics.details = _merged_details(run_metrics.details, other.details)
        run_metrics.additional_metrics = _merge_numbers(
            run_metrics.additional_metrics, other.additional_metrics
        )


def add_model_usage(
    run_metrics: RunMetrics,
    model_type: ModelType | str,
    model_id: str,
    provider: str,
    usage: dict[str, int] | None,
) -> None:
    """One call's ``usage`` (a model reply's token counts: ``input_tokens``,
    ``output_tokens``, ``reasoning_tokens``...) added to ``run_metrics``: to its totals and
    to the entry of the model (``provider``, ``model_id``) under ``model_type``."""
    share = ModelMetrics(id=model_id, provider=provider)
    for name in TOKEN_FIELDS:
        value = (usage or {}).get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            setattr(share, name, value)
    if not share.total_tokens:
        share.total_tokens = share.input_tokens + share.output_tokens
    if not share.audio_total_tokens:
        share.audio_total_tokens = share.audio_input_tokens + share.audio_output_tokens
    kind = model_type.value if isinstance(model_type, ModelType) else str(model_type)
    run_metrics.details = _merged_details(run_metrics.details, {kind: [share]})
    run_metrics.add_tokens(share)


def add_helper_metrics(
    run_metrics: RunMetrics, model_type: ModelType | str, helper: RunMetrics
) -> None:
    """The metrics of a helper model's own run (a memory, summary, parser or follow-up
    call, run as an inner agent) added to ``run_metrics``: its tokens to the totals, each of
    its models under ``model_type``."""
    kind = model_type.value if isinstance(model_type, ModelType) else str(model_type)
    shares = [share for items in (helper.details or {}).values() for share in items]
    run_metrics.add_tokens(helper)
    if shares:
        run_metrics.details = _merged_details(run_metrics.details, {kind: shares})
