"""The errors a tool call ends with: `ToolError` (the model is told, the run goes on),
`ModelRetry` (the model tries again) and `ToolRetriesExceededError` (the run stops)."""

from __future__ import annotations

from ferrule_kernel import FerruleError, register_error_kind

__all__ = ["ModelRetry", "ToolError", "ToolRetriesExceededError"]


@register_error_kind
class ToolError(FerruleError):
    """A tool call that failed; the model is told, and the run goes on."""

    kind = "tool_error"


class ModelRetry(Exception):  # pydantic-ai's name, which its users know
    """Raised by a tool to have the model try again: ``message`` goes back to the model as
    the call's result. A tool may be retried ``Tool.retries`` times in a run; one more
    ends the run with `ToolRetriesExceededError`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@register_error_kind
class ToolRetriesExceededError(FerruleError):
    """A tool raised `ModelRetry` more often than its ``retries`` allow; the run stops."""

    kind = "tool_retries_exceeded"
