"""Registers `http_request`: one HTTP(S) request, answered with status (also as
``status_code``, Ailoy 0.1's name), headers (as the server cased them) and body.

The input class and its checks live here (standard library only); the request itself,
and aiohttp, are imported on the first call.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal
from urllib.parse import urlsplit

import attrs
from ferrule_kernel import InvalidInputError, OperatorSpec, hookimpl, in_range, local_only
from ferrule_kit.network.hostpolicy import host_policy

from . import errors as _errors  # noqa: F401  (registers the error kinds for the wire)

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# RFC 9110 token (header field names).
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _upper(value: str) -> str:
    # A Python function, not str.upper itself: attrs reads a converter's signature, and a
    # builtin's costs the import of tokenize and its largest regex at every cold start.
    return str.upper(value)


def _check_url(_instance: Any, _attribute: Any, value: str) -> None:
    def bad(reason: str) -> InvalidInputError:
        return InvalidInputError(f"url {reason}", field="$.url")

    if _CONTROL.search(value) or " " in value.strip():
        raise bad("must not contain spaces or control characters")
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError as exc:
        raise bad(f"is not a valid URL: {exc}") from None
    if parts.scheme.lower() not in ("http", "https"):
        shown = f"{parts.scheme!r}" if parts.scheme else "none"
        raise bad(f"must be an http:// or https:// URL (scheme: {shown})")
    if not parts.hostname:
        raise bad("has no host")


def _check_method(_instance: Any, _attribute: Any, value: str) -> None:
    if value not in METHODS:
        raise InvalidInputError(
            f"method must be one of {', '.join(METHODS)}, got {value!r}", field="$.method"
        )


def _check_headers(instance: Any, _attribute: Any, value: dict[str, str]) -> None:
    for name, header in value.items():
        field = f"$.headers[{name!r}]"
        if not _TOKEN.fullmatch(name):
            raise InvalidInputError("header name is not a valid HTTP token", field=field)
        if _CONTROL.search(header.replace("\t", "")):  # (a tab is allowed)
            # (the value itself is not repeated: headers may carry credentials)
            raise InvalidInputError("header value must not contain control characters", field=field)
        if name.lower() == "authorization" and urlsplit(instance.url.strip()).username is not None:
            raise InvalidInputError(
                "an Authorization header cannot be combined with credentials in the url",
                field=field,
            )


#: The longest ``timeout`` a caller may ask for: a request holds a connection that long.
MAX_TIMEOUT = 300.0


def _check_timeout(_instance: Any, _attribute: Any, value: float) -> None:
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT):
        raise InvalidInputError(
            f"timeout must be a positive number of seconds up to {MAX_TIMEOUT:g}, got {value}",
            field="$.timeout",
        )


@attrs.frozen
class HTTPRequestInput:
    """One HTTP request. ``body`` is sent as UTF-8 text; ``timeout`` bounds the whole
    exchange, redirects and body included, in seconds (at most `MAX_TIMEOUT`). Only
    public addresses are reached unless the host allows more (see `policy`)."""

    url: str = attrs.field(validator=_check_url)
    method: str = attrs.field(default="GET", converter=_upper, validator=_check_method)
    headers: dict[str, str] = attrs.field(factory=dict, validator=_check_headers)
    body: str | None = None
    timeout: float = attrs.field(
        default=30.0, validator=_check_timeout, metadata=host_policy("the request's timeout")
    )


#: Where `web_fetch` sends every page request, as ``GET {proxy}?url=<page>`` (a proxy that
#: fetches for it, a loopback server in tests), unless a call's ``proxy_url`` says otherwise.
PROXY_VARIABLE = "FERRULE_WEB_FETCH_PROXY"
#: The longest text `web_fetch` returns by default (Ailoy's web_fetch cuts at 8000).
DEFAULT_MAX_CHARS = 8000


@attrs.frozen
class WebFetchInput:
    """A page to read: ``GET url``, its HTML turned into Markdown (``format="markdown"``)
    or plain text (``"text"``); scripts, styles, navigation, headers and footers left out.
    The text is cut at ``max_chars``. ``proxy_url`` (else ``$FERRULE_WEB_FETCH_PROXY``) is
    asked ``GET {proxy_url}?url=<url>`` instead; it is taken from code in the process only."""

    url: str = attrs.field(validator=_check_url)
    format: Literal["markdown", "text"] = "markdown"
    max_chars: int = attrs.field(
        default=DEFAULT_MAX_CHARS,
        validator=in_range(1, 10_000_000),
        metadata=host_policy("the longest text returned"),
    )
    timeout: float = attrs.field(
        default=30.0, validator=_check_timeout, metadata=host_policy("the request's timeout")
    )
    proxy_url: str | None = attrs.field(
        default=None,
        validator=local_only("a URL for the server to connect to"),
        metadata=host_policy("the proxy every page is fetched through"),
    )


@attrs.frozen
class WebFetchOutput:
    #: The page's text (Markdown or plain), cut at ``max_chars``.
    content: str
    #: The media type the server declared (``text/html``, ``text/plain``, ...).
    content_type: str
    #: The text was longer than ``max_chars``.
    truncated: bool


@hookimpl
def ferrule_register_operators() -> list[OperatorSpec]:
    return [
        OperatorSpec(
            "web_fetch",
            "ferrule_http_request.fetch:web_fetch",
            WebFetchInput,
            outputs=WebFetchOutput,
            description=(
                "Fetch a web page and return its text as Markdown (or plain text): "
                "{content, content_type, truncated}."
            ),
        ),
        OperatorSpec(
            "http_request",
            "ferrule_http_request.client:http_request",
            HTTPRequestInput,
            description=(
                "Make an HTTP(S) request. Returns {status, status_code, headers, body} "
                "(status_code: Ailoy 0.1's name of status; headers as the server cased them); "
                "an error status such as 404 is a response, not an error."
            ),
        ),
    ]
