"""Typed errors of `http_request` (registered so they cross the wire as themselves)."""

from __future__ import annotations

from ferrule_kernel import FerruleError, register_error_kind


@register_error_kind
class HTTPRequestError(FerruleError):
    """The request got no HTTP response: connection refused, name not resolved, TLS
    failure, the server hung up, too many redirects. (An HTTP error status is a response,
    returned as ``status``, not raised.)"""

    kind = "http_request_error"


@register_error_kind
class HTTPRequestTimeoutError(HTTPRequestError):
    """No complete response within ``timeout`` seconds."""

    kind = "http_request_timeout"
