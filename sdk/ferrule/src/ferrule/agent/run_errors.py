"""The typed errors an agent run can end with (besides the kernel's and the kit's)."""

from __future__ import annotations

from ferrule_kernel import FerruleError, error_from_dict, register_error_kind
from ferrule_kit.errors import ModelError


@register_error_kind
class ToolCallLimitError(FerruleError):
    """The run reached its ``tool_call_limit`` and was stopped."""

    kind = "tool_call_limit"


@register_error_kind
class OutputValidationError(FerruleError):
    """The model's final reply does not match the ``output_schema`` (after the retries)."""

    kind = "output_validation"


@register_error_kind
class UnknownRunError(FerruleError):
    """``continue_run`` or ``cancel`` named a run this agent does not have (or not paused)."""

    kind = "unknown_run"


@register_error_kind
class UsageLimitExceeded(FerruleError):  # pydantic-ai's name, which its users know
    """The run crossed one of its `UsageLimits` and was stopped. ``details`` carry ``limit``
    (the setting's name, e.g. ``"output_tokens_limit"``), its ``maximum`` and ``value``
    (what the run reached, or would have reached with one more request)."""

    kind = "usage_limit_exceeded"


@register_error_kind
class FallbackModelsFailedError(ModelError):
    """Every model of a `FallbackModel` failed. ``details["failures"]`` holds each one's
    error (``FerruleError.to_dict()`` plus ``model``, its index in the `FallbackModel`), in
    the order they were tried; `failures` rebuilds them as typed errors."""

    kind = "fallback_models_failed"

    @property
    def failures(self) -> list[FerruleError]:
        return [error_from_dict(failure) for failure in self.details.get("failures", [])]


@register_error_kind
class HookError(FerruleError):
    """A pre- or post-hook failed with an error of its own (not a check's): the run stops,
    as a broken guardrail must not let a run through. ``details``: ``hook`` (its name) and
    ``index`` (its place in the list)."""

    kind = "hook_failed"
