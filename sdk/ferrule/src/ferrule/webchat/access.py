"""Who may use the web chat: the checks of `ferrule serve` (docs/security.md), for a page
that a browser opens.

A browser cannot be told to send ``Authorization: Bearer``, so the token travels once, in
the address ``ferrule chat --web`` prints (``/?token=...``, as Jupyter does): the
first visit trades it for an HttpOnly, SameSite=Strict cookie and is redirected to the
same page without it, so it leaves neither the address bar nor the history. Every other
request must carry that cookie (or the bearer header, for programs). ``Host`` and
``Origin`` are checked as `ferrule.server.gate.Gate.admit` checks them: a DNS-rebinding
page names its own host, a cross-site page its own origin, and both are refused before
the token is even looked at.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ..server.gate import Hosts, same_origin

#: The cookie the token is traded for.
COOKIE = "ferrule_webchat"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _cookie(header: str, name: str) -> str | None:
    for pair in header.split(";"):
        key, sep, value = pair.strip().partition("=")
        if sep and key == name:
            return value
    return None


def _matches(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


class AccessGate:
    """ASGI middleware in front of the chat app: Host, Origin, then the token.

    ``token`` None: no token (only ever on loopback: `ferrule.server.check_bind` refuses
    it elsewhere). ``allowed_hosts`` and ``bound_host`` are `ferrule.server.gate.Hosts`';
    ``allowed_origins`` are the origins, besides the chat's own, whose pages may call it.
    """

    def __init__(
        self,
        app: ASGIApp,
        token: str | None,
        *,
        bound_host: str | None,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.token = token
        self.hosts = Hosts(allowed_hosts, bound_host)
        self.origins = frozenset(o.strip().lower().rstrip("/") for o in allowed_origins)

    def __repr__(self) -> str:  # never the token
        return (
            f"AccessGate(token={'set' if self.token else 'none'}, hosts={self.hosts.described()!r})"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self._refusal(scope, headers)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, text, extra = refusal
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"cache-control", b"no-store"),
                    *extra,
                ],
            }
        )
        await send({"type": "http.response.body", "body": text.encode()})

    def _refusal(
        self, scope: Scope, headers: dict[str, str]
    ) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        """None to let the request through, else (status, text, extra headers)."""
        host = headers.get("host")
        if host is not None and not self.hosts.allows(host):
            return (
                421,
                f"this web chat does not answer to Host {host!r} (it answers to "
                f"{self.hosts.described()}); if that name is its own, start it with "
                "--allowed-host NAME\n",
                [],
            )
        origin = headers.get("origin")
        if origin is not None and not (
            "*" in self.origins
            or origin.strip().lower().rstrip("/") in self.origins
            or same_origin(origin, host)
        ):
            return (403, f"requests from web pages of {origin!r} are refused\n", [])
        if self.token is None:
            return None
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if _matches(query.get("token"), self.token):
            # Trade the token for the cookie, and take it out of the address.
            rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
            location = scope.get("root_path", "") + scope["path"] + (f"?{rest}" if rest else "")
            cookie = f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
            return (
                303,
                "signed in\n",
                [(b"location", location.encode()), (b"set-cookie", cookie.encode())],
            )
        if _matches(_cookie(headers.get("cookie", ""), COOKIE), self.token):
            return None
        scheme, _, credentials = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and _matches(credentials.strip(), self.token):
            return None
        return (
            401,
            "this web chat needs its token: open the address `ferrule chat --web` printed "
            "(it ends in ?token=...)\n",
            [],
        )
