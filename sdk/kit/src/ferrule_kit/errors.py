"""Errors of the sdk layer: models, providers and tool calls. All are `FerruleError`s,
registered by kind so they cross `ferrule serve` as the same type."""

from __future__ import annotations

from typing import Any, ClassVar

from ferrule_kernel import FerruleError, InvalidInputError, register_error_kind

__all__ = [
    "AuthenticationError",
    "ContextWindowExceededError",
    "FerruleError",
    "InvalidInputError",
    "InvalidToolCallError",
    "MissingAPIKeyError",
    "ModelError",
    "ModelNotFoundError",
    "PermissionDeniedError",
    "ProviderBadRequestError",
    "ProviderConnectionError",
    "ProviderProtocolError",
    "ProviderTimeoutError",
    "ProviderUnavailableError",
    "QuotaExceededError",
    "RateLimitError",
    "StatusError",
    "StreamInterruptedError",
    "UnknownModelError",
    "UnsupportedContentError",
]


@register_error_kind
class StatusError(FerruleError):
    """A failure with an HTTP-like ``status_code`` (``details["status"]`` when one came with
    it, else the class's own) and a stable ``error_id`` / ``type`` (its kind): what Agno's
    exceptions carry, so a program reading them reads ferrule's."""

    kind = "status_error"
    default_status: ClassVar[int] = 500
    message: str

    def __init__(self, message: str, status_code: int = 500, **details: Any) -> None:
        if status_code != self.default_status:
            details.setdefault("status", status_code)
        super().__init__(message, **details)

    @property
    def status_code(self) -> int:
        status = self.details.get("status")
        return int(status) if isinstance(status, int) else self.default_status

    @property
    def error_id(self) -> str:
        return self.kind

    @property
    def type(self) -> str:
        return self.kind

    def __str__(self) -> str:
        return self.message


@register_error_kind
class ModelError(StatusError):
    """A model backend or provider failed; ``details`` carry ``provider``, ``status`` and the
    provider's own message, never a key; ``model_name`` / ``model_id`` name the model when
    known."""

    kind = "model_error"
    default_status: ClassVar[int] = 502

    #: Words in a provider's message that say the input was longer than the model's window
    #: (`classify`).
    CONTEXT_WINDOW_PATTERNS: ClassVar[tuple[str, ...]] = (
        "context_length_exceeded",
        "context window",
        "maximum context length",
        "token limit",
        "max_tokens",
        "too many tokens",
        "payload too large",
        "content_too_large",
        "request too large",
        "input too long",
        "prompt is too long",
        "prompt too long",
        "exceeds the model",
    )

    def __init__(
        self,
        message: str,
        status_code: int = 502,
        model_name: str | None = None,
        model_id: str | None = None,
        **details: Any,
    ) -> None:
        if model_name is not None:
            details.setdefault("model_name", model_name)
        if model_id is not None:
            details.setdefault("model", model_id)
        super().__init__(message, status_code, **details)

    @property
    def model_name(self) -> str | None:
        name = self.details.get("model_name", self.details.get("provider"))
        return None if name is None else str(name)

    @property
    def model_id(self) -> str | None:
        model = self.details.get("model")
        return None if model is None else str(model)

    @classmethod
    def classify(cls, error: ModelError) -> ModelError:
        """``error`` as the narrowest class it is: a rate limit (status 429 or 529) or an
        input over the context window (`CONTEXT_WINDOW_PATTERNS`), else itself."""
        if isinstance(error, (RateLimitError, ContextWindowExceededError)):
            return error
        narrower: type[ModelError] | None = None
        if error.status_code in (429, 529):
            narrower = RateLimitError
        elif any(p in error.message.lower() for p in cls.CONTEXT_WINDOW_PATTERNS):
            narrower = ContextWindowExceededError
        if narrower is None:
            return error
        details = {k: v for k, v in error.details.items() if k not in ("status",)}
        return narrower(error.message, error.status_code, **details)


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


# -- provider failures (raised through `ferrule_kit.network.http`) ---------------------------------
#
# Each carries ``details``: ``provider``, ``status`` (the HTTP status, None for a failure
# below HTTP), ``provider_message`` (the provider's own words, secrets scrubbed) and, when
# the provider sent them, ``code`` and ``type``. None carries a request header.


@register_error_kind
class ProviderBadRequestError(ModelError):
    """The provider refused the request as malformed (HTTP 400 / 422); never retried."""

    kind = "provider_bad_request"


@register_error_kind
class AuthenticationError(ModelError):
    """The provider rejected the API key (HTTP 401)."""

    kind = "authentication_error"
    default_status: ClassVar[int] = 401

    def __init__(
        self,
        message: str,
        status_code: int = 401,
        model_name: str | None = None,
        model_id: str | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message, status_code, model_name, model_id, **details)


@register_error_kind
class ContextWindowExceededError(ProviderBadRequestError):
    """The input is longer than the model's context window (an HTTP 400 whose message says
    so: `ModelError.classify`)."""

    kind = "context_window_exceeded"
    default_status: ClassVar[int] = 400

    def __init__(
        self,
        message: str,
        status_code: int = 400,
        model_name: str | None = None,
        model_id: str | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message, status_code, model_name, model_id, **details)


@register_error_kind
class PermissionDeniedError(ModelError):
    """The key is valid but may not use this model or endpoint (HTTP 403)."""

    kind = "permission_denied"


@register_error_kind
class ModelNotFoundError(ModelError):
    """The provider does not know the model id (HTTP 404), e.g. a retired model."""

    kind = "model_not_found"


@register_error_kind
class RateLimitError(ModelError):
    """Too many requests (HTTP 429) and the retries ran out; waiting helps."""

    kind = "rate_limited"
    default_status: ClassVar[int] = 429

    def __init__(
        self,
        message: str,
        status_code: int = 429,
        model_name: str | None = None,
        model_id: str | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message, status_code, model_name, model_id, **details)


@register_error_kind
class QuotaExceededError(RateLimitError):
    """A quota or billing limit is exhausted (an HTTP 429 the provider marks as such);
    waiting does not help, so it is never retried."""

    kind = "quota_exceeded"


@register_error_kind
class ProviderUnavailableError(ModelError):
    """The provider failed or is overloaded (HTTP 5xx, 529) and the retries ran out."""

    kind = "provider_unavailable"


@register_error_kind
class ProviderConnectionError(ModelError):
    """No connection to the provider (refused, reset or DNS failure before any reply)."""

    kind = "provider_connection_error"


@register_error_kind
class ProviderTimeoutError(ModelError):
    """The provider sent nothing for longer than the read timeout (or answered HTTP 408)."""

    kind = "provider_timeout"


@register_error_kind
class StreamInterruptedError(ModelError):
    """A reply stream broke after it had started (connection lost, or it ended early)."""

    kind = "stream_interrupted"


@register_error_kind
class ProviderProtocolError(ModelError):
    """The provider sent something that does not follow its own wire format."""

    kind = "provider_protocol_error"


# -- storage (the contract in `ferrule_kit.stores.storage`) ---------------------------------------
#
# Each carries ``details``: ``backend`` (``"sqlite"``, ``"postgres"``, ...) and ``store``,
# the store's name as its operator would say it (a file path; ``host:port/dbname``), never a
# password or a full connection string.

__all__ += [
    "SessionNotFoundError",
    "SessionStateConflictError",
    "StorageConflictError",
    "StorageError",
    "StorageSchemaError",
    "StorageUnavailableError",
]


@register_error_kind
class StorageError(FerruleError):
    """A storage backend failed."""

    kind = "storage_error"


@register_error_kind
class StorageUnavailableError(StorageError):
    """The store cannot be reached or opened (server down, file unopenable, locked past the
    busy timeout); ``details["reason"]`` says why. Waiting or fixing the store helps."""

    kind = "storage_unavailable"


@register_error_kind
class StorageSchemaError(StorageError):
    """The store's schema is not one this backend can use: newer than it knows (upgrade the
    plugin), or not a ferrule store at all."""

    kind = "storage_schema"


@register_error_kind
class StorageConflictError(StorageError):
    """A write contradicts what is stored, e.g. a ``run_id`` already stored in another
    session, or a ``memory_id`` of another user."""

    kind = "storage_conflict"


@register_error_kind
class SessionStateConflictError(StorageConflictError):
    """A compare-and-set of a session's state lost: another writer changed the state since
    the version given (``details``: ``session_id``, ``expected``, ``actual``). Nothing was
    stored; re-read the session, re-apply the change and write again."""

    kind = "session_state_conflict"


@register_error_kind
class SessionNotFoundError(StorageError):
    """A method that changes a session named one that is not stored."""

    kind = "session_not_found"
