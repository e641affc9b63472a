"""What an agent's ``pre_hooks`` and ``post_hooks`` are given, and how a check stops a run
(Agno's names): a hook or `BaseGuardrail` reads the run's `RunInput` (before the model
sees it) or its ``RunOutput`` (after), may change it (masking, say), and raises
`InputCheckError` / `OutputCheckError` to stop the run with that typed error.

Guardrail plugins build on this module alone (ferrule-guardrails is one): the agent knows
this contract, never a guardrail by name.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from typing import Any

import attrs
from ferrule_kernel import FerruleError, register_error_kind

from .content.messages import Message, converter

__all__ = [
    "BaseGuardrail",
    "CheckTrigger",
    "InputCheckError",
    "OutputCheckError",
    "RunInput",
]


class CheckTrigger(str, enum.Enum):
    """Why a check stopped a run (Agno's ``CheckTrigger``)."""

    OFF_TOPIC = "off_topic"
    INPUT_NOT_ALLOWED = "input_not_allowed"
    OUTPUT_NOT_ALLOWED = "output_not_allowed"
    VALIDATION_FAILED = "validation_failed"
    PROMPT_INJECTION = "prompt_injection"
    PII_DETECTED = "pii_detected"


class _CheckError(FerruleError):
    message: str
    #: What the check found (Agno's ``additional_data``), as given.
    additional_data: dict[str, Any] | None

    def __init__(
        self,
        message: str,
        check_trigger: CheckTrigger | str = CheckTrigger.INPUT_NOT_ALLOWED,
        additional_data: dict[str, Any] | None = None,
        **details: Any,
    ) -> None:
        trigger = check_trigger.value if isinstance(check_trigger, CheckTrigger) else check_trigger
        if additional_data is not None:
            details.setdefault("additional_data", additional_data)
        super().__init__(message, check_trigger=str(trigger), **details)
        self.additional_data = self.details.get("additional_data")

    @property
    def error_id(self) -> str:
        """The trigger's name (Agno's ``error_id``)."""
        return str(self.details.get("check_trigger", ""))

    @property
    def type(self) -> str:
        return self.kind

    @property
    def check_trigger(self) -> CheckTrigger | str:
        """The `CheckTrigger` (a custom trigger stays the string it was)."""
        value = str(self.details.get("check_trigger", ""))
        try:
            return CheckTrigger(value)
        except ValueError:
            return value


@register_error_kind
class InputCheckError(_CheckError):
    """A pre-hook refused the run's input; ``details["check_trigger"]`` says why."""

    kind = "input_check"


@register_error_kind
class OutputCheckError(_CheckError):
    """A post-hook refused the run's output; ``details["check_trigger"]`` says why."""

    kind = "output_check"

    def __init__(
        self,
        message: str,
        check_trigger: CheckTrigger | str = CheckTrigger.OUTPUT_NOT_ALLOWED,
        additional_data: dict[str, Any] | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message, check_trigger, additional_data, **details)


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Message):
        return value.text
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return "\n".join(filter(None, (_text_of(item) for item in value)))
    if isinstance(getattr(value, "type", None), str) and not isinstance(value, type):
        # a content part: its text, or nothing for media (an image has no text to check)
        text = getattr(value, "text", None) if value.type == "text" else None
        return text if isinstance(text, str) else ""
    if hasattr(value, "model_dump_json") and not isinstance(value, type):
        return str(value.model_dump_json())
    if attrs.has(type(value)):
        return json.dumps(converter.unstructure(value), ensure_ascii=False)
    if isinstance(value, dict):
        if "role" in value and isinstance(value.get("content"), (str, list)):
            return _text_of(value["content"])
        if value.get("type") == "text" and isinstance(value.get("text"), str):
            return str(value["text"])
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


@attrs.define
class RunInput:
    """A run's input as its pre-hooks see it: ``input_content`` is what the caller passed
    (a string, a message, a list of them, a dict, a model...), and the ``images``,
    ``videos``, ``audios`` and ``files`` given with it. A hook may replace any of them (a
    guardrail masking what it found): the run then starts from the new values, and that is
    what is stored."""

    input_content: Any
    images: Sequence[Any] | None = None
    videos: Sequence[Any] | None = None
    audios: Sequence[Any] | None = None
    files: Sequence[Any] | None = None

    def input_content_string(self) -> str:
        """The input as text (messages' texts one per line, models and dicts as JSON)."""
        return _text_of(self.input_content)

    def to_dict(self) -> dict[str, Any]:
        """The input as JSON-ready data: its content (messages and models as their dicts)
        and each media list that is set (each item's ``to_dict``)."""
        out: dict[str, Any] = {"input_content": _plain(self.input_content)}
        for name in ("images", "videos", "audios", "files"):
            items = getattr(self, name)
            if items:
                out[name] = [_plain(item) for item in items]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunInput:
        """The input ``data`` (a `to_dict`) describes; media come back as their dicts
        (``ferrule.media.Image.from_dict`` and its siblings read one)."""
        return cls(
            data.get("input_content", ""),
            data.get("images"),
            data.get("videos"),
            data.get("audios"),
            data.get("files"),
        )


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Message) or (attrs.has(type(value)) and not hasattr(value, "to_dict")):
        return converter.unstructure(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "model_dump") and not isinstance(value, type):
        return value.model_dump(exclude_none=True)
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else str(value)


class BaseGuardrail:
    """A check that can stand in ``pre_hooks`` / ``post_hooks`` (Agno's ``BaseGuardrail``).

    Subclasses implement `check` (given the `RunInput` as a pre-hook, the ``RunOutput`` as
    a post-hook) and raise `InputCheckError` / `OutputCheckError` to stop the run; they may
    change what they are given. `async_check` runs `check` unless overridden.
    """

    def check(self, run_input: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement check()")

    async def async_check(self, run_input: Any) -> None:
        self.check(run_input)
