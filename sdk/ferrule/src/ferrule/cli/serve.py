"""``ferrule serve``: the kernel and an OpenAI-compatible endpoint over HTTP (docs/serve.md)."""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ferrule_kernel import FerruleError

if TYPE_CHECKING:
    import asyncio


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the kernel's requests and an OpenAI-compatible API over HTTP",
        description="Serve the kernel (for Runtime(url=...)) and /v1/chat/completions. "
        "Binds 127.0.0.1 unless told otherwise; any other address needs a token.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)"
    )
    parser.add_argument(
        "--token",
        default=None,
        help="bearer token every client must send (default: $FERRULE_TOKEN); required "
        "for any address but loopback, and there a strong one (24+ characters). Prefer the "
        "variable: arguments show in ps.",
    )
    parser.add_argument(
        "--max-body-size",
        type=int,
        default=None,
        metavar="BYTES",
        help="largest request body accepted (default 16 MiB); larger ones get 413",
    )
    parser.add_argument(
        "--generate-token",
        action="store_true",
        help="make up a strong token and print it (for an address beyond loopback, when "
        "no token is set)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name clients reach the server by (repeatable; '*': any). Loopback names "
        "and the bound address are always allowed; any other Host is refused (421), "
        "which stops DNS-rebinding pages",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web origin (https://app.example) whose pages may call the server, with "
        "CORS on the OpenAI routes (repeatable; '*': any). Pages of other origins are "
        "refused (403)",
    )
    parser.add_argument(
        "--read-timeout",
        type=_seconds(positive=True),
        default=None,
        metavar="SECONDS",
        help="time a client has to send a request's headers and body (default 30)",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=_seconds(positive=False),
        default=None,
        metavar="SECONDS",
        help="on SIGTERM or Ctrl-C, time running requests get before they are cancelled "
        "(default 10); the process exits within about twice that, stuck plugins or not",
    )
    parser.add_argument(
        "--expose-errors",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="send a plugin's exception text to clients (default: on loopback only; "
        "otherwise clients get its type and the server logs the text)",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="ID",
        help="a model id to list in /v1/models, resolved at start (repeatable); any "
        "other id an installed plugin serves works too",
    )
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE:OBJECT",
        help="also register this plugin object, as Kernel(plugins=[...]) does (repeatable; "
        "for tests and development)",
    )
    parser.add_argument(
        "--stop-on-stdin-eof",
        action="store_true",
        help="stop as on SIGTERM when standard input ends: a parent that starts the server "
        "with a pipe for its stdin takes it down however the parent ends, killed included",
    )
    parser.set_defaults(func=_serve)


def _seconds(positive: bool) -> Callable[[str], float]:
    def seconds(text: str) -> float:
        value = float(text)
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise argparse.ArgumentTypeError(
                f"expected a number of seconds {'above' if positive else 'from'} 0, got {text!r}"
            )
        return value

    return seconds


def _serve(args: argparse.Namespace) -> int:
    import asyncio
    import pkgutil
    import secrets

    from ..runtime import new_kernel
    from ..server import (
        DEFAULT_MAX_BODY_SIZE,
        DEFAULT_READ_TIMEOUT,
        DEFAULT_SHUTDOWN_GRACE,
        check_bind,
        run_serving,
        serve,
    )

    token = args.token or os.environ.get("FERRULE_TOKEN") or None
    if token is None and args.generate_token:
        token = secrets.token_urlsafe(32)
        print(
            f"ferrule serve: generated token (clients send it as a bearer token): {token}",
            file=sys.stderr,
            flush=True,
        )
    grace = DEFAULT_SHUTDOWN_GRACE if args.shutdown_grace is None else args.shutdown_grace
    try:
        check_bind(args.host, token)
        kernel = new_kernel()
        for target in args.plugin:
            # Named on the command line by whoever starts the server, never by a request.
            kernel.register(pkgutil.resolve_name(target), name=target)
    except FerruleError as exc:
        print(f"ferrule serve: {exc.message}", file=sys.stderr)
        return 2
    except (ImportError, AttributeError, ValueError) as exc:
        print(f"ferrule serve: cannot load plugin: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2

    def ready(url: str) -> None:
        print(
            f"ferrule serve: listening on {url} (kernel: {url}/ferrule/v1, "
            f"OpenAI-compatible: {url}/v1){' with a bearer token' if token else ''}",
            flush=True,
        )

    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    previous = _stop_on_signals(loop, stop, grace)
    if args.stop_on_stdin_eof:
        _stop_at_stdin_eof()
    try:
        run_serving(
            loop,
            serve(
                kernel,
                host=args.host,
                port=args.port,
                token=token,
                max_body_size=args.max_body_size or DEFAULT_MAX_BODY_SIZE,
                models=args.model,
                ready=ready,
                stop=stop,
                read_timeout=DEFAULT_READ_TIMEOUT
                if args.read_timeout is None
                else args.read_timeout,
                allowed_hosts=args.allowed_host,
                allowed_origins=args.allowed_origin,
                expose_errors=args.expose_errors,
                shutdown_grace=grace,
            ),
        )
    except FerruleError as exc:  # e.g. a --model no installed plugin serves
        print(f"ferrule serve: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. the port is taken
        print(f"ferrule serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    finally:
        _close(loop, grace)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    _leave(0)
    return 0


def _close(loop: asyncio.AbstractEventLoop, grace: float) -> None:
    """`asyncio.run`'s ending, except that the loop's worker threads are not waited for: a
    plugin call stuck in one would hold the process for ever (see `_leave`)."""
    import asyncio

    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=max(grace, 1.0)))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


def _stop_on_signals(
    loop: asyncio.AbstractEventLoop, stop: asyncio.Event, grace: float
) -> dict[int, Any]:
    """SIGTERM (a service manager) and Ctrl-C stop the server cleanly: running requests get
    ``grace`` seconds, then components are closed. Python-level handlers, not the loop's:
    they run even while a plugin blocks the loop. If stopping takes more than twice the
    grace plus a few seconds (a plugin stuck in the loop or in its close), the process
    exits anyway; a second signal exits at once."""
    signals: list[int] = []

    def handle(signum: int, frame: object) -> None:
        signals.append(signum)
        if len(signals) > 1:
            _exit_now(f"second signal {signal.Signals(signum).name}", 1)
        loop.call_soon_threadsafe(stop.set)
        deadline = 2 * grace + 5
        watchdog = threading.Timer(
            deadline, _exit_now, (f"did not stop within {deadline:g} s (a plugin is stuck)", 1)
        )
        watchdog.daemon = True
        watchdog.start()

    return {signum: signal.signal(signum, handle) for signum in (signal.SIGINT, signal.SIGTERM)}


def _stop_at_stdin_eof() -> None:
    """Raise SIGTERM (its handler stops the server cleanly) once stdin ends: the OS closes a
    parent's end of the pipe when the parent exits, even killed, where an exit handler of
    the parent's own never runs. What the parent writes is read and dropped."""

    def watch() -> None:
        try:
            while os.read(sys.stdin.fileno(), 65536):
                pass
        except (OSError, ValueError):  # no stdin at all: ended too
            pass
        signal.raise_signal(signal.SIGTERM)

    threading.Thread(target=watch, name="ferrule-serve-stdin", daemon=True).start()


def _leave(code: int) -> None:
    """Return normally, unless a plugin call is still stuck in a worker thread: the
    interpreter would wait for it at exit, for ever, so exit without waiting."""
    deadline = time.monotonic() + 1  # idle worker threads end at once once the loop closed
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    for thread in others:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = [t for t in others if t.is_alive()]
    if stuck:
        _exit_now(f"exiting without waiting for {len(stuck)} stuck plugin call(s)", code)


def _exit_now(why: str, code: int) -> None:
    print(f"ferrule serve: {why}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(code)
