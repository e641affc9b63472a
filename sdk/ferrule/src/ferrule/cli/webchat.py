"""``ferrule chat --web``: the chat in a browser (`ferrule.webchat`, the extra ``ferrule[web]``).

    ferrule chat --web                    # http://127.0.0.1:7860/?token=... (printed)
    ferrule chat --web -m test --port 0   # the test model, on a free port

Loopback by default, with `ferrule serve`'s token rules: a strong random token unless one
is given (``--token``, ``$FERRULE_TOKEN``) or ``--no-token`` turns it off, which only
loopback allows; any other address needs a strong token. Host and Origin are checked as
`ferrule serve` checks them (docs/security.md). Gradio is imported only here, when
``--web`` is given.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

from ferrule_kernel import FerruleError

DEFAULT_WEB_PORT = 7860


def add_arguments(parser: argparse.ArgumentParser) -> None:
    web = parser.add_argument_group("web chat (--web)")
    web.add_argument(
        "--web", action="store_true", help="chat in a browser instead (needs ferrule[web])"
    )
    web.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    web.add_argument(
        "--port",
        type=int,
        default=DEFAULT_WEB_PORT,
        help=f"port (default {DEFAULT_WEB_PORT}; 0 picks a free one)",
    )
    web.add_argument(
        "--token",
        default=None,
        help="the token the page's address carries (default: $FERRULE_TOKEN, else a new "
        "random one); any address but loopback needs a strong one",
    )
    web.add_argument(
        "--no-token",
        action="store_true",
        help="no token at all (loopback only: anyone on this machine may then chat)",
    )
    web.add_argument(
        "--max-upload-mib",
        type=float,
        metavar="MIB",
        help="the largest file the page takes, in MiB (default 20); a larger one is refused",
    )
    web.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name the browser reaches the chat by, besides loopback names (repeatable)",
    )


def installed_models(runtime: Any, chosen: str) -> dict[str, str]:
    """The picker's models: the one chosen, config.toml's aliases, the test model and the
    local models on this machine when their plugins are installed (any other id can still
    be chosen with ``-m``)."""
    from ..config import load_config

    kernel = runtime.kernel
    config = load_config()
    models = {chosen: chosen}
    for alias in config.aliases:
        models.setdefault(alias, config.model(alias) or alias)
    types = {t["name"] for t in kernel.component_types()}
    if "test_language_model" in types:
        models.setdefault("test", "test")
    if any(op["name"] == "list_local_models" for op in kernel.operators()):
        try:
            local = runtime.call("list_local_models", {})["models"]
        except FerruleError:  # a broken backend: the picker still has the rest
            local = []
        for model in local:
            if model.get("downloaded"):
                models.setdefault(model["model"], model["model"])
    return models


def _refusal(args: argparse.Namespace) -> str | None:
    """Why these options do not go with ``--web`` (None when they do)."""
    if args.question is not None:
        return "--web takes no question: ask it on the page"
    if args.session is not None:
        return "--session is the terminal chat's: the page lists its sessions (--db names their db)"
    if args.no_token and args.token:
        return "give --token or --no-token, not both"
    if args.max_upload_mib is not None and not args.max_upload_mib > 0:
        return "--max-upload-mib must be more than 0"
    return None


def run(args: argparse.Namespace, model_id: str) -> int:
    refusal = _refusal(args)
    if refusal is not None:
        print(f"ferrule chat --web: {refusal}", file=sys.stderr)
        return 2
    if os.environ.get("GRADIO_TEMP_DIR"):  # the operator chose where uploads go
        return _serve(args, model_id)
    # Uploads go to a folder only this user can open (Gradio's default, /tmp/gradio, is
    # readable by every user of the machine), removed with whatever is left in it at exit.
    import shutil
    import tempfile

    uploads = tempfile.mkdtemp(prefix="ferrule-webchat-")
    os.environ["GRADIO_TEMP_DIR"] = uploads  # read when Gradio is imported
    # uvicorn stops on SIGTERM, then raises it again: as SystemExit, the cleanup runs
    previous = signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        return _serve(args, model_id)
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(uploads, ignore_errors=True)


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _serve(args: argparse.Namespace, model_id: str) -> int:
    try:
        import gradio  # noqa: F401 (the extra's dependency, checked up front)

        from ..webchat import WebChat, WebChatServer, create_app
        from ..webchat.server import url_of
    except ImportError as exc:
        print(
            f"ferrule chat --web needs the web extra ({exc.name} is missing): "
            "pip install 'ferrule[web]'",
            file=sys.stderr,
        )
        return 2
    import secrets

    from ..runtime import Runtime
    from ..server import check_bind
    from .chat import ModelId, parse_options
    from .sessions import sqlite_db

    token: str | None = None
    if not args.no_token:
        token = args.token or os.environ.get("FERRULE_TOKEN") or secrets.token_urlsafe(32)
    try:
        check_bind(args.host, token)
    except FerruleError as exc:
        print(f"ferrule chat --web: {exc.message}", file=sys.stderr)
        return 2
    with Runtime() as rt:
        try:
            options = parse_options(args.option)
            models = {
                label: ModelId(model, args.provider, options)
                for label, model in installed_models(rt, model_id).items()
            }
            limit = {}
            if args.max_upload_mib is not None:
                limit["max_file_size"] = max(1, round(args.max_upload_mib * 2**20))
            chat = WebChat(
                rt,
                models,
                default_model=model_id,
                storage=sqlite_db(args.db),  # --db, shared with ferrule chat --session
                tools=args.tool,
                system_message=args.system,
                **limit,
            )
            server = WebChatServer(
                create_app(
                    chat, token=token, bound_host=args.host, allowed_hosts=args.allowed_host
                ),
                args.host,
                args.port,
            )
        except FerruleError as exc:
            print(f"ferrule chat --web: error ({exc.kind}): {exc.message}", file=sys.stderr)
            return 1
        except OSError as exc:
            print(
                f"ferrule chat --web: cannot listen on {args.host}:{args.port}: {exc}",
                file=sys.stderr,
            )
            return 1
        address = url_of("127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host, server.port)

        def ready() -> None:
            shown = f"{address}/?token={token}" if token else f"{address}/"
            print(f"ferrule chat --web: open {shown} (Ctrl-C stops)", flush=True)

        try:
            server.run(ready)
        finally:
            chat.close()
    return 0
