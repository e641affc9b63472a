"""A loopback HTTP server for provider wire tests: it speaks what each test scripts,
records what the client sent, and fails the test when a request breaks the provider's
documented request shape.

The server is a real aiohttp web server on 127.0.0.1 (a random free port), so the
plugin's real HTTP client, SSE reader, retries and timeouts are what get tested.

Scripting. Each request the server receives takes the next `Reply` queued with
`LoopbackServer.script` (a callable ``(RecordedRequest) -> Reply`` may stand in for one
to build the reply from the request). A reply's ``body`` is a list of actions run in
order: ``bytes``/``str`` are written (the status line and headers go out just before the
first write), `Pause` waits (a stall), `Reset` aborts the connection with a TCP RST (before
the status line if nothing was written yet)::

    from ferrule_kit.testing.loopback import LoopbackServer, Reply, Pause, Reset, sse, json_schema_validator

    async with LoopbackServer(validate=json_schema_validator(REQUEST_SCHEMA)) as server:
        server.script(
            Reply.json({"error": {"message": "slow down", "type": "rate_limit"}}, status=429,
                       headers={"retry-after": "0"}),
            Reply.sse([sse({"choices": [...]}), Pause(0.05), sse("[DONE]")]),
        )
        ... point the plugin at server.url ...
        assert server.requests[1].json["stream"] is True

- ``sse(data, event=None, id=None, newline="\\n")`` formats one event (a dict or list is
  sent as JSON, a str as is); Anthropic-style named events pass ``event=``; Gemini-style
  CRLF framing passes ``newline="\\r\\n"``.
- `Reply.sse(actions)`, `Reply.json(obj, status=200, headers=None)`, `Reply.reset()` (reset
  before any byte), `Reply(status, headers, body, content_type)` for anything else.

Validation. ``validate`` is called with every `RecordedRequest` and returns a list of
problems (empty when the request is well formed). A request with problems is answered
``400`` (a non-retried status, so clients stop) *and* recorded; leaving the ``async with``
block (or calling `LoopbackServer.check`) raises ``AssertionError`` listing every problem,
so a malformed request fails the test even when the client swallowed the 400. A request
that arrives when no reply is scripted is a problem too. `json_schema_validator(schema,
path=None)` builds a validator from a JSON Schema (``jsonschema``, in the sdk's ``testing``
extra); `all_of(*validators)` combines several.

Records. `LoopbackServer.requests` lists every `RecordedRequest` (``method``, ``path``,
``query``, ``headers`` with lower-case names, ``body``, ``json``, ``peer``: the client's
address, the same for requests that shared a connection). `wait_disconnected(n)`
waits until the client has dropped the connection of request ``n`` (that is how a test
sees that abandoning a stream closes its connection).

Threads. ``async with`` runs the server on the test's own event loop; ``with`` (or
`start_in_thread` / `stop_in_thread`) runs it on a loop in a thread of its own, for the
synchronous `ferrule.Runtime`, whose calls block the calling thread.

Fixtures. `server_fixture(validate)` makes an async pytest fixture yielding a started
server with that validator (``server = server_fixture(validator)`` in a provider's
conftest); `loopback` is one with no validator, to import into a test module or conftest
(``from ferrule_kit.testing.loopback import loopback``).
"""

from __future__ import annotations

import asyncio
import collections
import json
import socket
import struct
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, Union

import attrs

__all__ = [
    "LoopbackServer",
    "Pause",
    "RecordedRequest",
    "Reply",
    "Reset",
    "all_of",
    "json_schema_validator",
    "loopback",
    "server_fixture",
    "sse",
]


@attrs.frozen
class Pause:
    """Wait ``seconds`` before the next action (a stalled server)."""

    seconds: float


@attrs.frozen
class Reset:
    """Abort the connection with a TCP RST."""


Action = Union[bytes, str, Pause, Reset]  # noqa: UP007


def sse(data: Any, event: str | None = None, id: str | None = None, newline: str = "\n") -> bytes:
    """One server-sent event; ``data`` that is not a str is sent as JSON."""
    text = data if isinstance(data, str) else json.dumps(data)
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    lines.extend(f"data: {line}" for line in text.split("\n"))
    return (newline.join(lines) + newline + newline).encode()


@attrs.frozen
class Reply:
    """What the server answers to one request (see the module docstring)."""

    status: int = 200
    headers: Mapping[str, str] = attrs.field(factory=dict)
    body: Sequence[Action] = ()
    content_type: str = "application/json"

    @classmethod
    def json(cls, obj: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Reply:
        return cls(status, dict(headers or {}), (json.dumps(obj).encode(),))

    @classmethod
    def sse(
        cls, body: Iterable[Action], status: int = 200, headers: Mapping[str, str] | None = None
    ) -> Reply:
        return cls(status, dict(headers or {}), tuple(body), "text/event-stream")

    @classmethod
    def reset(cls) -> Reply:
        """Reset the connection before sending anything."""
        return cls(body=(Reset(),))


@attrs.define
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes
    #: The client's (host, port): two requests with the same peer shared a connection.
    peer: Any = None
    disconnected: threading.Event = attrs.field(factory=threading.Event, repr=False)

    @property
    def json(self) -> Any:
        """The body parsed as JSON (None if empty); invalid JSON raises ValueError."""
        return json.loads(self.body) if self.body else None


Validator = Callable[[RecordedRequest], list[str]]
Scripted = Union[Reply, Callable[[RecordedRequest], Reply]]  # noqa: UP007


def all_of(*validators: Validator) -> Validator:
    def validate(request: RecordedRequest) -> list[str]:
        return [problem for v in validators for problem in v(request)]

    return validate


def json_schema_validator(schema: Mapping[str, Any], path: str | None = None) -> Validator:
    """Check each request's JSON body against ``schema`` (only requests to ``path`` if given;
    others are problems). Needs ``jsonschema`` (``pip install 'ferrule[testing]'``)."""
    import jsonschema

    checker = jsonschema.Draft202012Validator(schema)

    def validate(request: RecordedRequest) -> list[str]:
        if path is not None and request.path != path:
            return [f"{request.method} {request.path}: expected a request to {path}"]
        try:
            body = request.json
        except ValueError as exc:
            return [f"request body is not JSON: {exc}"]
        return [
            f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
            for error in sorted(
                checker.iter_errors(body), key=lambda e: list(map(str, e.absolute_path))
            )
        ]

    return validate


class LoopbackServer:
    """See the module docstring."""

    def __init__(self, validate: Validator | None = None) -> None:
        self.validate = validate
        self.requests: list[RecordedRequest] = []
        self.problems: list[str] = []
        self._script: collections.deque[Scripted] = collections.deque()
        self._runner: Any = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        if self._port is None:
            raise RuntimeError("the loopback server is not started")
        return f"http://127.0.0.1:{self._port}"

    def script(self, *replies: Scripted) -> None:
        """Queue replies for the next requests, in order."""
        self._script.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        return len(self._script)

    def check(self) -> None:
        """Raise AssertionError if any request was malformed or unexpected."""
        if self.problems:
            raise AssertionError(
                "loopback server saw bad requests:\n  " + "\n  ".join(self.problems)
            )

    async def wait_disconnected(self, index: int = -1, timeout: float = 5.0) -> None:
        """Wait until the client dropped the connection of request ``index``."""
        deadline = time.monotonic() + timeout
        event = self.requests[index].disconnected
        while not event.is_set():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the client kept request {index}'s connection open for {timeout}s"
                )
            await asyncio.sleep(0.01)

    # -- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=0.1
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> LoopbackServer:
        await self.start()
        return self

    async def __aexit__(self, exc_type: Any, *exc: object) -> None:
        await self.stop()
        if exc_type is None:
            self.check()

    def start_in_thread(self) -> None:
        loop = asyncio.new_event_loop()
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.start())
            started.set()
            loop.run_forever()

        self._thread_loop = loop
        self._thread = threading.Thread(target=run, name="loopback-server", daemon=True)
        self._thread.start()
        started.wait()

    def stop_in_thread(self) -> None:
        loop, thread = self._thread_loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        self._thread_loop = self._thread = None

    def __enter__(self) -> LoopbackServer:
        self.start_in_thread()
        return self

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        self.stop_in_thread()
        if exc_type is None:
            self.check()

    # -- serving -------------------------------------------------------------------

    async def _handle(self, request: Any) -> Any:
        from aiohttp import web

        record = RecordedRequest(
            method=request.method,
            path=request.path,
            query=dict(request.query),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=await request.read(),
            peer=request.transport.get_extra_info("peername") if request.transport else None,
        )
        self.requests.append(record)
        where = f"request {len(self.requests) - 1} ({record.method} {record.path})"
        problems = self.validate(record) if self.validate is not None else []
        if not problems and not self._script:
            problems = ["no reply was scripted for it"]
        if problems:
            self.problems.extend(f"{where}: {p}" for p in problems)
            return web.json_response(
                {
                    "error": {
                        "message": "loopback: bad request: " + "; ".join(problems),
                        "type": "invalid_request_error",
                    }
                },
                status=400,
            )
        scripted = self._script.popleft()
        reply = scripted(record) if callable(scripted) else scripted
        try:
            return await self._play(request, record, reply)
        except (ConnectionError, asyncio.CancelledError):
            record.disconnected.set()
            raise

    async def _play(self, request: Any, record: RecordedRequest, reply: Reply) -> Any:
        from aiohttp import web

        if all(isinstance(a, (bytes, str)) for a in reply.body):
            body = b"".join(a.encode() if isinstance(a, str) else a for a in reply.body)  # type: ignore[misc]
            response = web.Response(
                status=reply.status,
                headers=reply.headers,
                body=body,
                content_type=reply.content_type,
            )
            return response
        stream: web.StreamResponse | None = None
        for action in reply.body:
            if isinstance(action, Pause):
                await self._pause(request, record, action.seconds)
                continue
            if isinstance(action, Reset):
                _reset(request)
                record.disconnected.set()
                raise ConnectionResetError("loopback: scripted reset")
            if stream is None:
                stream = web.StreamResponse(status=reply.status, headers=reply.headers)
                stream.content_type = reply.content_type
                await stream.prepare(request)
            try:
                await stream.write(action.encode() if isinstance(action, str) else action)
            except ConnectionError:
                record.disconnected.set()
                raise
        if stream is None:
            stream = web.StreamResponse(status=reply.status, headers=reply.headers)
            stream.content_type = reply.content_type
            await stream.prepare(request)
        await stream.write_eof()
        return stream

    async def _pause(self, request: Any, record: RecordedRequest, seconds: float) -> None:
        # Sleep in slices, noticing a client that leaves meanwhile.
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            transport = request.transport
            if transport is None or transport.is_closing():
                record.disconnected.set()
                raise ConnectionResetError("loopback: the client went away")
            await asyncio.sleep(min(left, 0.01))


def _reset(request: Any) -> None:
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            # linger on, timeout 0: close() sends RST instead of FIN
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    transport.abort()


def server_fixture(validate: Validator | None = None, *, name: str = "server") -> Any:
    """An async pytest fixture named ``name`` yielding a started `LoopbackServer` with
    ``validate``, stopped (and checked: a malformed request fails the test) afterwards."""
    import pytest_asyncio

    @pytest_asyncio.fixture(name=name)
    async def server() -> AsyncIterator[LoopbackServer]:
        async with LoopbackServer(validate=validate) as started:
            yield started

    return server


loopback = server_fixture(name="loopback")
