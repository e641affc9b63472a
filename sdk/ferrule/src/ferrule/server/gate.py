"""What every route shares, whichever API it belongs to, and the one place for request
checks: where a request may come from (`Gate.admit`: the Host it names and the web page
that sent it, with CORS for the origins the configuration allows), who may call
(`Gate.authorized`), what a request body may be (`Gate.read_json`: JSON only, within a
size, a nesting depth and a time), what may leave (`dumps`: strict JSON; `Redactor`,
which every error body goes through; `Gate.public`, what a remote client learns of a
plugin's own exception), and the access log (`access_logged`). A check that concerns
every request belongs in `Gate`."""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import math
import os
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from aiohttp import hdrs, web
from ferrule_kernel import (
    FerruleError,
    InvalidInputError,
    InvalidOutputError,
    PluginError,
    get_logger,
)
from ferrule_kit.network.http import scrub

from ..remote import (
    CrossOriginError,
    MisdirectedRequestError,
    RequestTimeoutError,
    RequestTooLargeError,
    UnsupportedMediaTypeError,
)

log = get_logger("ferrule.server")
access_log = get_logger("ferrule.server.access")

DEFAULT_MAX_BODY_SIZE = 16 * 1024 * 1024

#: Seconds a client has to send a request body once its headers arrived (a client sending
#: half a body and then nothing would otherwise hold its connection for ever).
DEFAULT_READ_TIMEOUT = 30.0

#: Request bodies nested deeper than this are refused: real requests (tool schemas
#: included) nest a few levels, and thousands exhaust the parser's and the validators'
#: recursion.
MAX_JSON_DEPTH = 64

#: Attribute names whose values are secrets: never in a response body, wherever they appear.
SECRET_ATTRIBUTE_WORDS = ("key", "token", "secret", "password")

#: Error details deeper than this are cut (they are the plugin's; a body must still encode).
_MAX_ERROR_DEPTH = 16

#: Header names a CORS preflight may ask for, reflected as they were asked.
_HEADER_LIST = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*")


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def dumps(value: Any) -> bytes:
    """``value`` as strict JSON. What JSON cannot carry (NaN, an arbitrary object, nesting
    past the encoder's recursion) is an `InvalidOutputError`, never ``str()`` of it or
    invalid JSON; a lone surrogate (valid in a Python string, not in UTF-8) goes out
    escaped (``"\\ud800"``)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InvalidOutputError(
            f"the server cannot send this output as JSON: {reason}",
            errors=[{"path": "$", "message": reason}],
        ) from None
    try:
        return text.encode()
    except UnicodeEncodeError:  # only escaping can carry a lone surrogate
        return json.dumps(value, allow_nan=False, separators=(",", ":")).encode()


def parse_json(data: bytes) -> Any:
    """A request body as JSON: anything else, or nesting past `MAX_JSON_DEPTH`, is an
    `InvalidInputError` naming the problem; a lone surrogate in a string becomes U+FFFD
    (`_without_lone_surrogates`)."""
    too_deep = InvalidInputError(
        f"the request body is nested more than {MAX_JSON_DEPTH} levels deep", field="body"
    )
    try:
        value = json.loads(data)
    except RecursionError:
        raise too_deep from None
    except ValueError as exc:  # UnicodeDecodeError (a body that is not UTF-8) included
        raise InvalidInputError(
            f"the request body is not valid JSON: {exc}", field="body"
        ) from None
    # Only a body with that many brackets can be that deep: most are never walked.
    if data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH and _deeper_than(value, MAX_JSON_DEPTH):
        raise too_deep
    # Only a \uD8xx-\uDFxx escape can spell a surrogate (UTF-8 cannot): most bodies have none.
    if _SURROGATE_ESCAPE.search(data):
        value = _without_lone_surrogates(value)
    return value


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with each lone surrogate of its strings (keys included) replaced by U+FFFD.

    JSON may escape a lone surrogate (``"\\ud800"``); it is no character, and no backend
    can use it: UTF-8, a tokenizer, a provider's request all refuse it. So it is replaced
    at the wire, where a request becomes ferrule's, as decoders that yield valid Unicode do
    (Go's, a browser's USVString): every backend behind the server gets text, and the rest
    of the request (a chat whose client cut an emoji in two) is kept. A pair that spells
    one character was joined by the JSON decoder already. (Called on a body at most
    `MAX_JSON_DEPTH` deep.)"""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {
            _without_lone_surrogates(key): _without_lone_surrogates(item)
            for key, item in value.items()
        }
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    # Iterative: a recursive walk would fail on exactly the bodies it is there to refuse.
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


class Redactor:
    """Makes an outgoing error safe to send: scrubs secrets (the server's token, API keys
    in the model routes, the values of secret-named environment variables where providers
    read their keys), whatever a backend puts in its messages (the kernel has already
    scrubbed what looks like a secret from a plugin's exception text); and keeps only what
    JSON carries, so an error body always encodes."""

    def __init__(self, token: str | None) -> None:
        self.secrets: list[str] = [token] if token else []
        self.add_from(os.environ, min_length=8)

    def add_from(self, attributes: Mapping[str, Any], min_length: int = 1) -> None:
        for key, value in attributes.items():
            if isinstance(value, str) and len(value) >= min_length and value not in self.secrets:
                if any(word in key.lower() for word in SECRET_ATTRIBUTE_WORDS):
                    self.secrets.append(value)

    def __call__(self, value: Any, depth: int = 0) -> Any:
        if isinstance(value, str):
            return scrub(value, self.secrets)
        if value is None or isinstance(value, (bool, int)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if depth >= _MAX_ERROR_DEPTH:
            return "..."
        if isinstance(value, dict):
            return {self(str(k)): self(v, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self(v, depth + 1) for v in value]
        return f"<{type(value).__name__}>"


#: The status logged for a request that ended without an answer: its client left (or the
#: server stopped) first, as nginx logs it.
CLIENT_CLOSED = 499


def access_logged(handler: Handler) -> Handler:
    """``handler``, logging one access line per request when it ends (`log_request`)."""

    async def route(request: web.Request) -> web.StreamResponse:
        started = time.monotonic()
        status = CLIENT_CLOSED
        try:
            response = await handler(request)
            status = response.status
            return response
        finally:
            log_request(request, status, started)

    return route


def log_request(request: web.BaseRequest, status: int, started: float) -> None:
    """The access log: one ``request`` event at info level on ``ferrule.server.access``,
    with the method, the path (never the query), the status, the time taken and the
    client's address. Never a body, never a header (the token travels in one)."""
    access_log.info(
        "request",
        method=request.method,
        path=request.path,
        status=status,
        ms=round((time.monotonic() - started) * 1000, 1),
        client=request.remote,
    )


def _hostname(host: str) -> str:
    """The name or address in a ``Host`` value, without its port: ``[::1]:80`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 0 else host
    name, sep, port = host.rpartition(":")
    if sep and (port.isdigit() or not port):
        host = name
    return host.rstrip(".")


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_loopback_name(host: str) -> bool:
    address = _ip(host)
    return (
        address.is_loopback
        if address is not None
        else (host == "localhost" or host.endswith(".localhost"))
    )


class Hosts:
    """The ``Host`` values a server answers to. A DNS-rebinding page (a name of the
    attacker's, made to resolve to this server's address) reaches the server with its own
    name as ``Host``; a name never resolves as an address literal does, so: loopback names
    always, the configured names, the bound name, and addresses — only the bound one when
    the server is bound to one address. ``bound`` None (routes mounted in a host's app,
    which binds where it likes) takes any address; ``"*"`` in ``names`` any Host at all."""

    def __init__(self, names: Iterable[str] = (), bound: str | None = None) -> None:
        self.names = frozenset(_hostname(n) if n != "*" else n for n in names)
        self.bound = _hostname(bound) if bound else None
        address = _ip(self.bound) if self.bound else None
        # A wildcard bind (0.0.0.0, ::) listens on every address of the machine.
        self.bound_address = None if address is None or address.is_unspecified else address

    def allows(self, host: str) -> bool:
        name = _hostname(host)
        if "*" in self.names or name in self.names or name == self.bound:
            return True
        if _is_loopback_name(name):
            return True
        address = _ip(name)
        if address is None:
            return False
        if self.bound_address is None:
            return True
        return address == self.bound_address or (
            address.is_loopback and self.bound_address.is_loopback
        )

    def described(self) -> str:
        named = sorted(n for n in self.names if n != "*")
        if self.bound and _ip(self.bound) is None:
            named.append(self.bound)
        if self.bound_address is not None:
            named.append(str(self.bound_address))
        else:
            named.append("its addresses")
        return ", ".join(["localhost", *named])


def _origin(origin: str) -> str:
    return origin.strip().lower().rstrip("/")


class Gate:
    """The request checks of one server: Host, Origin (and CORS), token, and the body.

    ``token`` None: no token check. ``allowed_hosts``, ``bound_host``: see `Hosts`.
    ``allowed_origins``: the web origins (``https://app.example``) whose pages may call the
    server, and get CORS answers on the routes that offer CORS; ``"*"``: any. A page of
    any other origin is refused, except one the server itself served (same origin).
    ``expose_errors``: send a plugin's own exception text to clients (else it stays in the
    server's log and the client learns the plugin, the request and the exception type).
    """

    def __init__(
        self,
        token: str | None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        *,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        allowed_hosts: Iterable[str] = (),
        bound_host: str | None = None,
        allowed_origins: Iterable[str] = (),
        expose_errors: bool = False,
    ) -> None:
        self.token = token
        self.max_body_size = max_body_size
        self.read_timeout = read_timeout
        self.hosts = Hosts(allowed_hosts, bound_host)
        self.origins = frozenset(_origin(o) for o in allowed_origins)
        self.expose_errors = expose_errors
        self.redact = Redactor(token)

    # -- where a request comes from ---------------------------------------------------

    def admit(self, request: web.Request) -> None:
        """Refuse a request naming a Host this server does not answer to (DNS rebinding)
        or sent by a web page of an origin it does not allow (CSRF)."""
        host = request.headers.get(hdrs.HOST)
        # Browsers always send Host: a request without one is no page's.
        if host is not None and not self.hosts.allows(host):
            raise MisdirectedRequestError(
                f"this server does not answer to Host {_hostname(host)!r} (it answers to "
                f"{self.hosts.described()}); if that name is the server's own, start it with "
                f"--allowed-host {_hostname(host)}",
                host=_hostname(host),
            )
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is not None and not (self._origin_allowed(origin) or same_origin(origin, host)):
            raise CrossOriginError(
                f"requests from web pages of {origin!r} are refused; if that origin may use "
                f"this server, start it with --allowed-origin {_origin(origin)}",
                origin=origin,
            )

    def _origin_allowed(self, origin: str) -> bool:
        return "*" in self.origins or _origin(origin) in self.origins

    async def open_event_stream(self, request: web.Request) -> web.StreamResponse:
        """A prepared ``text/event-stream`` answer to ``request`` (unbuffered by proxies,
        with its CORS headers): the streamed replies of the OpenAI, Responses and
        Messages routes."""
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
                **self.cors_headers(request),
            }
        )
        await response.prepare(request)
        return response

    def cors_headers(self, request: web.Request) -> dict[str, str]:
        """The CORS headers of an answer to a page of an allowed origin (none otherwise)."""
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is None or not self._origin_allowed(origin):
            return {}
        return {hdrs.ACCESS_CONTROL_ALLOW_ORIGIN: origin, hdrs.VARY: hdrs.ORIGIN}

    async def preflight(self, request: web.Request) -> web.Response:
        """The answer to a CORS preflight (``OPTIONS``, once `admit` let it in): only for
        an allowed origin."""
        headers = self.cors_headers(request)
        if not headers:  # same-origin pages never preflight: this one is cross-origin
            origin = request.headers.get(hdrs.ORIGIN, "")
            raise CrossOriginError(
                f"requests from web pages of {origin!r} are refused; if that origin may use "
                f"this server, start it with --allowed-origin {_origin(origin)}",
                origin=origin,
            )
        asked = request.headers.get(hdrs.ACCESS_CONTROL_REQUEST_HEADERS, "").strip()
        headers.update(
            {
                hdrs.ACCESS_CONTROL_ALLOW_METHODS: "GET, POST, OPTIONS",
                # The origin is trusted by configuration: it may send what it asks for
                # (the openai JavaScript client sends headers of its own).
                hdrs.ACCESS_CONTROL_ALLOW_HEADERS: asked
                if _HEADER_LIST.fullmatch(asked)
                else "Authorization, Content-Type",
                hdrs.ACCESS_CONTROL_MAX_AGE: "600",
            }
        )
        return web.Response(status=204, headers=headers)

    # -- who may call -------------------------------------------------------------------

    def authorized(self, request: web.Request) -> bool:
        if not self.token:
            return True
        given = request.headers.get("Authorization", "")
        scheme, _, credentials = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            credentials.strip().encode(), self.token.encode()
        )

    # -- what a request body may be -----------------------------------------------------

    async def read_json(self, request: web.Request) -> Any:
        """The JSON body: sent as JSON (a form or ``text/plain`` is what a page of another
        site can send without asking), within the size limit whatever the host app's own
        limit, and within the read timeout."""
        given = request.headers.get(hdrs.CONTENT_TYPE)
        # Read here, not with aiohttp's `request.content_type`: its parser raises on some
        # malformed values (";0*").
        content_type = (given or "").partition(";")[0].strip().lower()
        if content_type != "application/json" and not (
            content_type.startswith("application/") and content_type.endswith("+json")
        ):
            raise UnsupportedMediaTypeError(
                "the request body must be JSON, sent with 'Content-Type: application/json' "
                f"(got {'no Content-Type' if given is None else repr(given)})",
                field="Content-Type",
                accepted=["application/json"],
            )
        try:
            data = await asyncio.wait_for(self._read_body(request), self.read_timeout)
        except asyncio.TimeoutError:
            raise RequestTimeoutError(
                f"the request body did not arrive within {self.read_timeout:g} seconds",
                field="body",
                timeout=self.read_timeout,
            ) from None
        return parse_json(data)

    async def _read_body(self, request: web.Request) -> bytes:
        too_large = RequestTooLargeError(
            f"the request body is larger than this server accepts ({self.max_body_size} bytes)",
            field="body",
            limit=self.max_body_size,
        )
        if request.content_length is not None and request.content_length > self.max_body_size:
            raise too_large
        data = bytearray()
        async for chunk in request.content.iter_chunked(1 << 16):
            data += chunk
            if len(data) > self.max_body_size:
                raise too_large
        return bytes(data)

    # -- what may leave -----------------------------------------------------------------

    def public(self, exc: FerruleError) -> FerruleError:
        """``exc`` as a remote client may see it. A plugin's own exception text (paths,
        hosts, queries, whatever it put there) reaches clients only when the server exposes
        errors; otherwise they learn which request failed in which plugin and the
        exception's type, and the server's log has the rest."""
        if (
            self.expose_errors
            or not isinstance(exc, PluginError)
            or "exception_type" not in exc.details
        ):
            return exc
        log.warning("plugin_failed", error=exc.message)
        details = exc.details
        where = f" in plugin {details['plugin']!r}" if details.get("plugin") else ""
        return PluginError(
            f"{details.get('target', 'the request')} failed{where}: "
            f"{details['exception_type']} (its message is in the server's log)",
            **{k: v for k, v in details.items() if k in ("plugin", "target", "exception_type")},
        )


def same_origin(origin: str, host: str | None) -> bool:
    """A page the server itself served (what a host app mounting these routes may do)."""
    if host is None:
        return False
    try:
        netloc = urlsplit(origin.strip()).netloc
    except ValueError:
        return False
    return bool(netloc) and netloc.lower() == host.strip().lower()
