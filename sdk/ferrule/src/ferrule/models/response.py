"""Agno's ``agno.models.response``: what one model call answers (`ModelResponse`), the
events of a model's stream (`ModelResponseEvent`), one tool call a run made
(`ToolExecution`, as ``RunOutput.tools`` and the tool events show it) and `FileType`.

`ToolExecution.from_kit` reads the engine's record of a call (`ferrule_kit.stores.storage`'s);
`ModelResponse.from_kit` the engine's assistant message and usage.
"""

from __future__ import annotations

import enum
import time
from typing import TYPE_CHECKING, Any

import attrs

from ..media import Audio, File, Image, Video
from ..metrics import MessageMetrics, ToolCallMetrics
from .message import Citations

if TYPE_CHECKING:
    from ferrule_kit.content.messages import Message as KitMessage
    from ferrule_kit.stores.storage import ToolExecution as KitToolExecution

    from ..tools.function import UserFeedbackQuestion, UserInputField

__all__ = ["FileType", "ModelResponse", "ModelResponseEvent", "ToolExecution"]


class ModelResponseEvent(str, enum.Enum):
    """What a chunk of a model's stream is."""

    tool_call_paused = "ToolCallPaused"
    tool_call_started = "ToolCallStarted"
    tool_call_completed = "ToolCallCompleted"
    assistant_response = "AssistantResponse"
    compression_started = "CompressionStarted"
    compression_completed = "CompressionCompleted"
    model_request_started = "ModelRequestStarted"
    model_request_completed = "ModelRequestCompleted"
    fallback_model_activated = "FallbackModelActivated"


class FileType(str, enum.Enum):
    MP4 = "mp4"
    GIF = "gif"
    MP3 = "mp3"
    WAV = "wav"
    PNG = "png"
    JPG = "jpg"


def _now() -> int:
    return int(time.time())


@attrs.define
class ToolExecution:
    """One tool call of a run: the tool, its arguments, its result or error, and, for a
    paused run, what it waits for (a confirmation, the user's input, an external result)."""

    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_args: dict[str, Any] | None = None
    tool_call_error: bool | None = None
    result: str | None = None
    metrics: ToolCallMetrics | None = None
    child_run_id: str | None = None
    stop_after_tool_call: bool = False
    created_at: int = attrs.field(factory=_now)
    requires_confirmation: bool | None = None
    confirmed: bool | None = None
    confirmation_note: str | None = None
    requires_user_input: bool | None = None
    user_input_schema: list[UserInputField] | None = None
    user_feedback_schema: list[UserFeedbackQuestion] | None = None
    answered: bool | None = None
    external_execution_required: bool | None = None
    external_execution_silent: bool | None = None

    @property
    def is_paused(self) -> bool:
        """Whether the call waits for someone (confirmation, input, an external result)."""
        return bool(
            self.requires_confirmation
            or self.requires_user_input
            or self.external_execution_required
        )

    def to_dict(self) -> dict[str, Any]:
        out = attrs.asdict(self, recurse=False)
        if self.metrics is not None:
            out["metrics"] = self.metrics.to_dict()
        if self.user_input_schema is not None:
            out["user_input_schema"] = [f.to_dict() for f in self.user_input_schema]
        if self.user_feedback_schema is not None:
            out["user_feedback_schema"] = [q.to_dict() for q in self.user_feedback_schema]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolExecution:
        from ..tools.function import UserFeedbackQuestion, UserInputField

        known = {f.name for f in attrs.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if isinstance(values.get("metrics"), dict):
            values["metrics"] = ToolCallMetrics.from_dict(values["metrics"])
        if values.get("user_input_schema") is not None:
            values["user_input_schema"] = [
                UserInputField.from_dict(f) if isinstance(f, dict) else f
                for f in values["user_input_schema"]
            ]
        if values.get("user_feedback_schema") is not None:
            values["user_feedback_schema"] = [
                UserFeedbackQuestion.from_dict(q) if isinstance(q, dict) else q
                for q in values["user_feedback_schema"]
            ]
        return cls(**values)

    @classmethod
    def from_kit(cls, execution: KitToolExecution) -> ToolExecution:
        """Agno's view of the engine's record of a call."""
        import json

        result = execution.result
        if result is not None and not isinstance(result, str):
            result = json.dumps(result, default=str)
        arguments = execution.arguments if isinstance(execution.arguments, dict) else None
        metrics = None
        if execution.duration is not None:
            metrics = ToolCallMetrics(duration=execution.duration)
        return cls(
            tool_call_id=execution.tool_call_id,
            tool_name=execution.name,
            tool_args=arguments,
            tool_call_error=execution.error is not None,
            result=result if execution.error is None else execution.error,
            metrics=metrics,
        )


@attrs.define
class ModelResponse:
    """What one model call answered: its text (``content``), the tool calls it asked for,
    reasoning, media it made, and its usage (``response_usage``)."""

    role: str | None = None
    content: Any = None
    parsed: Any = None
    audio: Audio | None = None
    images: list[Image] | None = None
    videos: list[Video] | None = None
    audios: list[Audio] | None = None
    files: list[File] | None = None
    tool_calls: list[dict[str, Any]] = attrs.Factory(list)
    tool_executions: list[ToolExecution] | None = attrs.Factory(list)
    event: str = ModelResponseEvent.assistant_response.value
    provider_data: dict[str, Any] | None = None
    redacted_reasoning_content: str | None = None
    reasoning_content: str | None = None
    citations: Citations | None = None
    response_usage: MessageMetrics | None = None
    created_at: int = attrs.field(factory=_now)
    extra: dict[str, Any] | None = None
    updated_session_state: dict[str, Any] | None = None
    compression_stats: dict[str, Any] | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    time_to_first_token: float | None = None
    reasoning_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out = attrs.asdict(self, recurse=False)
        for name in ("images", "videos", "audios", "files"):
            if out[name] is not None:
                out[name] = [m.to_dict() for m in out[name]]
        if self.audio is not None:
            out["audio"] = self.audio.to_dict()
        if self.tool_executions is not None:
            out["tool_executions"] = [t.to_dict() for t in self.tool_executions]
        if self.citations is not None:
            out["citations"] = attrs.asdict(self.citations)
        if self.response_usage is not None:
            out["response_usage"] = self.response_usage.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelResponse:
        known = {f.name for f in attrs.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if isinstance(values.get("audio"), dict):
            values["audio"] = Audio.from_dict(values["audio"])
        for name, kind in (
            ("images", Image),
            ("videos", Video),
            ("audios", Audio),
            ("files", File),
        ):
            if values.get(name):
                values[name] = [
                    kind.from_dict(m) if isinstance(m, dict) else m for m in values[name]
                ]
        if values.get("tool_executions"):
            values["tool_executions"] = [
                ToolExecution.from_dict(t) if isinstance(t, dict) else t
                for t in values["tool_executions"]
            ]
        if isinstance(values.get("citations"), dict):
            from .message import citations_of

            values["citations"] = citations_of(values["citations"])
        if isinstance(values.get("response_usage"), dict):
            values["response_usage"] = MessageMetrics.from_dict(values["response_usage"])
        return cls(**values)

    @classmethod
    def from_kit(cls, message: KitMessage, usage: dict[str, Any] | None = None) -> ModelResponse:
        """Agno's view of an assistant message the engine received, with its usage
        (``{"input_tokens", "output_tokens", ...}``)."""
        from .message import Message

        view = Message.from_kit(message)
        metrics = None
        if usage:
            metrics = MessageMetrics(
                input_tokens=int(usage.get("input_tokens") or 0),
                output_tokens=int(usage.get("output_tokens") or 0),
                total_tokens=int(
                    usage.get("total_tokens")
                    or (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)
                ),
                cache_read_tokens=int(usage.get("cache_read_tokens") or 0),
                cache_write_tokens=int(usage.get("cache_write_tokens") or 0),
                reasoning_tokens=int(usage.get("reasoning_tokens") or 0),
            )
        return cls(
            role=view.role,
            content=view.content,
            tool_calls=list(view.tool_calls or []),
            reasoning_content=view.reasoning_content,
            response_usage=metrics,
            input_tokens=metrics.input_tokens if metrics else None,
            output_tokens=metrics.output_tokens if metrics else None,
            total_tokens=metrics.total_tokens if metrics else None,
        )
