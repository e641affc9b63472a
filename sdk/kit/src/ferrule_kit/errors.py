"""Errors of the sdk layer: models, providers and tool calls. All are `FerruleError`s,
registered by kind so they cross `ferrule serve` as the same type."""

from __future__ import annotations

from ferrule_kernel import FerruleError, InvalidInputError, register_error_kind

__all__ = [
    "AuthenticationError",
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
    "StreamInterruptedError",
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


# -- provider failures (raised through `ferrule_kit.http`) ---------------------------------
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


# -- storage (the contract in `ferrule_kit.storage`) ---------------------------------------
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
