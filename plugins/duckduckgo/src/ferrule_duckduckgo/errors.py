"""Typed errors of the DuckDuckGo operators (registered so they cross the wire as themselves)."""

from __future__ import annotations

from ferrule_kernel import FerruleError, register_error_kind


@register_error_kind
class WebSearchError(FerruleError):
    """The search got no usable answer: the connection failed, the server answered with an
    error status, or its reply is not in the shape DuckDuckGo's endpoints use."""

    kind = "web_search_error"


@register_error_kind
class WebSearchRateLimitError(WebSearchError):
    """DuckDuckGo refused the request as too many (it answers 202, 403, 418 or 429)."""

    kind = "web_search_rate_limited"


@register_error_kind
class WebSearchTimeoutError(WebSearchError):
    """No complete reply within the call's ``timeout``."""

    kind = "web_search_timeout"
