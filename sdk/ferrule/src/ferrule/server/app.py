"""Running the server: `add_routes` (into your aiohttp app, on your kernel), `create_app`,
`serve` (what ``ferrule serve`` runs) and `ServerThread`; the refusal to listen beyond
loopback without a strong token; aiohttp's own errors answered as JSON in each API's
shape; a loop that a plugin's stray exception does not stop."""

from __future__ import annotations

import asyncio
import ipaddress
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from aiohttp import web
from ferrule_kernel import FerruleError, Kernel, get_logger
from ferrule_kernel.errors import interrupts_request
from ferrule_kit import kit_plugin

from .._bridge import Watchdog
from ..remote import KERNEL_API, RemoteError
from ..runtime import new_kernel
from .agent_api import AgentRoutes
from .anthropic_api import AnthropicRoutes
from .anthropic_wire import anthropic_error_body
from .embeddings_api import EmbeddingsRoutes
from .gate import DEFAULT_MAX_BODY_SIZE, DEFAULT_READ_TIMEOUT, Gate, Handler, dumps, log_request
from .kernel_api import KernelRoutes
from .openai_api import ModelCatalog, OpenAIRoutes
from .openai_wire import OpenAIError
from .responses_api import ResponsesRoutes

log = get_logger("ferrule.server")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080

#: Seconds requests still running at shutdown (SIGTERM) get to finish before they are
#: cancelled.
DEFAULT_SHUTDOWN_GRACE = 10.0

#: Seconds the rest of a body refused early (413, 408) is drained before the connection
#: is closed.
LINGERING_TIME = 2.0

#: What a token must have on an address beyond loopback: guessing it must be hopeless
#: (``secrets.token_urlsafe(32)``, what ``--generate-token`` makes, has 43 characters).
MIN_TOKEN_LENGTH = 24
MIN_TOKEN_DISTINCT = 10

T = TypeVar("T")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen beyond this machine without a token, or with one a client could
    guess (on loopback any token will do: the machine's own users are the ones it keeps
    out)."""
    if is_loopback(host):
        return
    if not token:
        raise FerruleError(
            f"refusing to serve on {host!r} without a token: anyone who can reach it could "
            "run your models and plugins. Set FERRULE_TOKEN (or pass --token, or "
            "--generate-token); clients then send 'Authorization: Bearer <token>'. Without "
            "a token, bind 127.0.0.1.",
            host=host,
        )
    if len(token) < MIN_TOKEN_LENGTH or len(set(token)) < MIN_TOKEN_DISTINCT:
        raise FerruleError(
            f"refusing to serve on {host!r} with a weak token: on an address beyond loopback "
            f"it needs at least {MIN_TOKEN_LENGTH} characters, {MIN_TOKEN_DISTINCT} of them "
            "different (e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))', "
            "or pass --generate-token)",
            host=host,
        )


def _ensure_sdk_hooks(kernel: Kernel) -> None:
    # The model route hooks are the sdk's: a host's bare Kernel may not have them yet.
    if not kernel.plugin_manager.is_registered(kit_plugin):
        kernel.register(kit_plugin)


def add_routes(
    app: web.Application,
    kernel: Kernel,
    *,
    token: str | None = None,
    max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    models: Iterable[str] = (),
    prefix: str = "",
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    expose_errors: bool = False,
    bound_host: str | None = None,
) -> None:
    """Add ferrule's routes to your aiohttp ``app``, served by your ``kernel``.

    ``token``: the bearer token every route but ``/health`` requires (None: no check).
    ``models``: model ids listed by ``/v1/models`` (each resolved now; others on first use).
    ``prefix``: where the routes go (``"/ai"`` -> ``/ai/v1/chat/completions``).
    ``read_timeout``: seconds a client has to send its request body.
    ``allowed_hosts``: the names clients reach the server by, besides loopback names and
    addresses (``"*"``: any; docs/security.md); ``bound_host``: the address it listens on,
    if only that address may appear as ``Host``.
    ``allowed_origins``: web origins whose pages may call the routes (CORS on the OpenAI
    routes); ``"*"``: any.
    ``expose_errors``: send a plugin's exception text to clients (else only its type).
    For a disconnecting client to cancel its generation at once, run the app with
    ``handler_cancellation=True`` (`serve` does); otherwise it stops at the next write.
    """
    _ensure_sdk_hooks(kernel)
    kernel.load_plugins()  # discovery now, not racing the first requests
    gate = Gate(
        token,
        max_body_size,
        read_timeout=read_timeout,
        allowed_hosts=allowed_hosts,
        bound_host=bound_host,
        allowed_origins=allowed_origins,
        expose_errors=expose_errors,
    )
    kernel_routes = KernelRoutes(kernel, gate)
    openai_routes = OpenAIRoutes(kernel, gate, ModelCatalog(kernel, gate.redact, models))
    prefix = prefix.rstrip("/")
    kernel_routes.add_to(app.router, prefix)
    AgentRoutes(kernel_routes).add_to(app.router, prefix)
    openai_routes.add_to(app.router, prefix)
    ResponsesRoutes(openai_routes).add_to(app.router, prefix)
    EmbeddingsRoutes(openai_routes).add_to(app.router, prefix)
    AnthropicRoutes(openai_routes).add_to(app.router, prefix)
    app.router.add_get(f"{prefix}/health", _health)


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


@web.middleware
async def _json_http_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """aiohttp's own 404/405 as JSON in the shape of the API the path belongs to."""
    started = time.monotonic()
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        log_request(request, exc.status, started)
        message = f"{exc.reason}: {request.method} {request.path}"
        if KERNEL_API in request.path:
            body = {"error": RemoteError(message, status=exc.status).to_dict()}
        elif "/v1/messages" in request.path:
            body = anthropic_error_body(OpenAIError(exc.status, message))
        else:
            body = OpenAIError(
                exc.status, message, code=exc.reason.lower().replace(" ", "_")
            ).body()
        return web.Response(body=dumps(body), status=exc.status, content_type="application/json")


KERNEL_KEY = web.AppKey("ferrule_kernel", Kernel)


def create_app(
    kernel: Kernel | None = None,
    *,
    token: str | None = None,
    max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    models: Iterable[str] = (),
    close_kernel: bool | None = None,
    **options: Any,
) -> web.Application:
    """A new aiohttp application serving ``kernel`` (a new one with every installed plugin
    if None). ``close_kernel``: delete the kernel's components when the app shuts down
    (default: only a kernel it created). ``options``: `add_routes`'s. Mount it in yours
    with ``app.add_subapp(...)``."""
    if close_kernel is None:
        close_kernel = kernel is None
    app = web.Application(middlewares=[_json_http_errors], client_max_size=max_body_size + 1)
    app[KERNEL_KEY] = kernel = new_kernel() if kernel is None else kernel
    add_routes(app, kernel, token=token, max_body_size=max_body_size, models=models, **options)
    if close_kernel:

        async def close(app: web.Application) -> None:
            await app[KERNEL_KEY].aclose()

        app.on_cleanup.append(close)
    return app


async def serve(
    kernel: Kernel | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    models: Iterable[str] = (),
    ready: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
    close_kernel: bool = True,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    expose_errors: bool | None = None,
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE,
) -> None:
    """Serve until ``stop`` is set (or forever), then delete the kernel's components
    (unless ``close_kernel`` is False). ``ready`` gets the URL once listening (with the
    real port when ``port`` is 0). ``expose_errors`` (see `add_routes`) is on by default
    on loopback only. Requests still running when ``stop`` is set get ``shutdown_grace``
    seconds, then are cancelled. The other options are `add_routes`'s; ``read_timeout``
    also bounds how long a connection may take to send a request's headers."""
    check_bind(host, token)
    app = create_app(
        kernel,
        token=token,
        max_body_size=max_body_size,
        models=models,
        close_kernel=close_kernel,
        read_timeout=read_timeout,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        expose_errors=is_loopback(host) if expose_errors is None else expose_errors,
        bound_host=host,
    )
    runner = web.AppRunner(
        app,
        # a client that disconnects cancels its request at once, closing the plugin's
        # stream (its generation) with it
        handler_cancellation=True,
        access_log=None,  # ferrule's routes log each request themselves (gate.access_logged)
        # a connection that sends no complete request (half its headers, then nothing) is
        # closed after this, as one idle between requests is
        keepalive_timeout=read_timeout,
        # After an early answer (413, 408), the rest of the body is read and dropped for at
        # most this long, so the client gets to read the answer; aiohttp's 10 s would let a
        # slow sender hold the connection that much longer.
        lingering_time=LINGERING_TIME,
        shutdown_timeout=shutdown_grace,
    )
    await runner.setup()
    # An async plugin running blocking code stalls every request: name it in the log, as
    # the Runtime does for its loop.
    watchdog = Watchdog.start(asyncio.get_running_loop(), threading.current_thread())
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound_host, bound_port = runner.addresses[0][:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        if ready is not None:
            ready(f"http://{shown}:{bound_port}")
        await (stop or asyncio.Event()).wait()
    finally:
        if watchdog is not None:
            watchdog.stop()
        await runner.cleanup()


class ServerThread:
    """`serve` on its own event loop in a daemon thread: for tests, notebooks and
    synchronous hosts. ``with ServerThread(kernel) as url: ...``"""

    def __init__(
        self,
        kernel: Kernel | None = None,
        *,
        host: str = DEFAULT_HOST,
        port: int = 0,
        **options: Any,
    ) -> None:
        self._args = {"kernel": kernel, "host": host, "port": port, **options}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self.url: str | None = None

    def start(self) -> str:
        started = threading.Event()
        failure: list[BaseException] = []

        def ready(url: str) -> None:
            self.url = url
            started.set()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._stop = asyncio.Event()
            try:
                run_serving(loop, serve(**self._args, ready=ready, stop=self._stop))
            except BaseException as exc:
                failure.append(exc)
            finally:
                loop.close()
                started.set()

        self._thread = threading.Thread(target=run, name="ferrule-server", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            raise failure[0]
        assert self.url is not None
        return self.url

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread is not None:
            if not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_serving(loop: asyncio.AbstractEventLoop, main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` (`serve`) on ``loop`` to its end. A plugin can raise past every request
    (a callback it scheduled on the loop raising `SystemExit`): asyncio then stops the
    loop, and this logs it and runs the loop on, so the server keeps serving. What
    interrupts the server itself (the user's Ctrl-C in the main thread) still stops it."""
    task = loop.create_task(main)
    while True:
        try:
            return loop.run_until_complete(task)
        except BaseException as exc:
            if task.done() or interrupts_request(exc):
                raise
            log.error("loop_callback_failed", error=repr(exc))
