"""``ferrule call``, ``ferrule iter``, ``ferrule define``, ``ferrule delete`` (``ferrule plugins``
is `ferrule.cli.plugins`).

``call`` and ``iter`` take an operator, or ``COMPONENT.METHOD``. A component lives in a
runtime, and this command's own runtime ends with the command: so components are defined,
deleted and called on a running ``ferrule serve`` (``--url``, or ``$FERRULE_URL``, with
``--token`` or ``$FERRULE_TOKEN``). ``define`` leaves its component on the server for later
commands (and other clients) until ``ferrule delete``; the server's operators are called
the same way. Without a URL, ``call`` and ``iter`` run operators in-process.

JSON input comes from the argument, ``-`` (stdin), or stdin when it is piped and no
argument is given.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ferrule_kernel import FerruleError

URL_VARIABLE = "FERRULE_URL"
TOKEN_VARIABLE = "FERRULE_TOKEN"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    for name, help_text, func in (
        ("call", "call an operator (or COMPONENT.METHOD) with JSON input, print its output", _call),
        ("iter", "stream an operator (or COMPONENT.METHOD) and print each item as it comes", _iter),
    ):
        parser = subparsers.add_parser(name, help=help_text)
        parser.add_argument(
            "target", metavar="OPERATOR", help="an operator, or COMPONENT.METHOD (needs --url)"
        )
        _input_argument(parser)
        server_arguments(parser, required=False)
        parser.set_defaults(func=func)

    define = subparsers.add_parser(
        "define",
        help="define a component on a ferrule server (--url); it stays until ferrule delete",
    )
    define.add_argument("component_type", metavar="TYPE", help="e.g. llamacpp_language_model")
    define.add_argument("name", help="the component's name, for COMPONENT.METHOD")
    _input_argument(define, "the attributes: JSON object (default {}); - reads stdin")
    define.add_argument(
        "--placement",
        default=None,
        metavar="JSON",
        help='where the server runs it, e.g. \'{"kind": "ray", "replicas": 2, "num_gpus": 1}\' '
        "(a placement plugin on the server, e.g. ferrule-ray; docs/deployment.md)",
    )
    server_arguments(define, required=True)
    define.set_defaults(func=_define)

    delete = subparsers.add_parser("delete", help="delete a component from a ferrule server")
    delete.add_argument("name")
    server_arguments(delete, required=True)
    delete.set_defaults(func=_delete)


def _input_argument(parser: argparse.ArgumentParser, help_text: str | None = None) -> None:
    parser.add_argument(
        "input",
        nargs="?",
        help=help_text or "JSON object (default {}); - reads stdin, as does piped input",
    )


def server_arguments(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """``--url`` and ``--token``: the ``ferrule serve`` a command talks to."""
    where = "the ferrule serve to use" if required else "run on this ferrule serve instead"
    parser.add_argument("--url", help=f"{where} (default ${URL_VARIABLE})")
    parser.add_argument(
        "--token",
        help=f"the server's bearer token (default ${TOKEN_VARIABLE}; prefer the variable: "
        "arguments show in ps)",
    )


def stdin_is_piped() -> bool:
    """True when stdin is a pipe or a file (``echo hi | ferrule ...``, ``< file``), not a
    terminal or /dev/null: only then is reading it what the user meant."""
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # closed, or replaced without a descriptor
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def read_input(text: str | None) -> Any:
    """A JSON argument (``-`` or, when none is given, piped stdin), refused as a
    `FerruleError` naming where it is not JSON."""
    if text is None:
        text = sys.stdin.read() if stdin_is_piped() else "{}"
    elif text == "-":
        text = sys.stdin.read()
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise FerruleError(
            f"input is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None


def fail(exc: FerruleError) -> int:
    """A command's failure on stderr; the exit status 1."""
    print(f"error ({exc.kind}): {exc.message}", file=sys.stderr)
    return 1


def server_address(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(url, token) from the arguments, else the environment; url None: no server."""
    return args.url or os.environ.get(URL_VARIABLE) or None, (
        args.token or os.environ.get(TOKEN_VARIABLE) or None
    )


def runtime_for(args: argparse.Namespace) -> Any:
    """The `Runtime` a command runs on: the server's when one is named, else its own."""
    from ..runtime import Runtime

    url, token = server_address(args)
    if url is None:
        return Runtime()
    return Runtime(url=url, token=token)


def _method(args: argparse.Namespace) -> tuple[str, str] | None:
    """(component, method) when the target is ``COMPONENT.METHOD``; refused without a
    server: a component of this command's own runtime would not outlive it."""
    component, dot, method = args.target.rpartition(".")
    if not dot:
        return None
    if server_address(args)[0] is None:
        raise FerruleError(
            f"{args.target!r} names a method of component {component!r}: components live on "
            f"a ferrule server (`ferrule serve`, then `ferrule define TYPE {component} "
            f"--url URL`); pass its --url (or set {URL_VARIABLE})"
        )
    return component, method


def _call(args: argparse.Namespace) -> int:
    try:
        inputs = read_input(args.input)
        method = _method(args)
        with runtime_for(args) as rt:
            if method is None:
                result = rt.call(args.target, inputs)
            else:
                result = rt.call_method(*method, inputs)
    except FerruleError as exc:
        return fail(exc)
    print(json.dumps(result, ensure_ascii=False, indent=2))
    return 0


def _iter(args: argparse.Namespace) -> int:
    try:
        inputs = read_input(args.input)
        method = _method(args)
        with runtime_for(args) as rt:
            items = (
                rt.call_iter(args.target, inputs)
                if method is None
                else rt.call_iter_method(*method, inputs)
            )
            for item in items:
                print(json.dumps(item, ensure_ascii=False), flush=True)
    except FerruleError as exc:
        return fail(exc)
    return 0


def _no_server(command: str) -> int:
    print(
        f"ferrule {command}: components live on a ferrule server; this command's own "
        f"runtime would end with it. Start one (`ferrule serve`) and pass --url URL (or set "
        f"{URL_VARIABLE})",
        file=sys.stderr,
    )
    return 2


def _send(args: argparse.Namespace, request: str, body: dict[str, Any]) -> None:
    """One request to the server's kernel API, with no runtime around it: a `RemoteRuntime`
    deletes what it defined when it stops, and a defined component must stay."""
    import asyncio

    from ..remote import KernelClient

    url, token = server_address(args)

    async def send() -> None:
        client = KernelClient(url, token)  # type: ignore[arg-type]
        try:
            await client.request(request, body)
        finally:
            await client.close()

    asyncio.run(send())


def _define(args: argparse.Namespace) -> int:
    if server_address(args)[0] is None:
        return _no_server("define")
    try:
        attributes = read_input(args.input)
        body = {"component_type": args.component_type, "name": args.name, "attrs": attributes}
        if args.placement is not None:
            body["placement"] = read_input(args.placement)
        _send(args, "define", body)
    except FerruleError as exc:
        return fail(exc)
    print(f"defined {args.name} ({args.component_type})")
    return 0


def _delete(args: argparse.Namespace) -> int:
    if server_address(args)[0] is None:
        return _no_server("delete")
    try:
        _send(args, "delete", {"name": args.name})
    except FerruleError as exc:
        return fail(exc)
    print(f"deleted {args.name}")
    return 0
