"""Errors of the sdk layer: models, providers and tool calls. All are `FerruleError`s,
registered by kind so they cross `ferrule serve` as the same type."""

from __future__ import annotations

from ferrule_kernel import FerruleError, InvalidInputError, register_error_kind

__all__ = [
    "FerruleError",
    "InvalidInputError",
    "InvalidToolCallError",
    "MissingAPIKeyError",
    "ModelError",
    "UnknownModelError",
    "UnsupportedContentError",
]


@register_error_kind
class ModelError(FerruleError):
    """A model backend or provider failed; ``details`` carry ``provider``, ``status`` and the
    provider's own message, never a key."""

    kind = "model_error"


@register_error_kind
class UnknownModelError(FerruleError):
    """No installed plugin serves this model id (or it needs ``provider=``)."""

    kind = "unknown_model"


@register_error_kind
class MissingAPIKeyError(FerruleError):
    kind = "missing_api_key"


@register_error_kind
class UnsupportedContentError(InvalidInputError):
    """A content part the chosen provider does not accept; refused before any request."""

    kind = "unsupported_content"


@register_error_kind
class InvalidToolCallError(FerruleError):
    """A model produced a tool call whose arguments are not valid JSON."""

    kind = "invalid_tool_call"
