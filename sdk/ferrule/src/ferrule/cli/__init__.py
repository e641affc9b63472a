"""The ``ferrule`` command.

Each subcommand lives in its own module exposing ``add_parser(subparsers)``, which adds a
parser whose ``func`` default takes the parsed arguments and returns an exit code.
Register a new one by adding its module to `SUBCOMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any

SUBCOMMANDS = [
    "ferrule.cli.plugins",  # plugins
    "ferrule.cli.kernel",  # call, iter, define, delete
    "ferrule.cli.serve",  # serve
    "ferrule.cli.models",  # models list|download|remove
    "ferrule.cli.chat",  # chat
    "ferrule.cli.keys",  # keys set|list|path
    "ferrule.cli.knowledge",  # knowledge add|search
    "ferrule.cli.sessions",  # sessions list|show|delete
    "ferrule.cli.batch",  # batch
]


class _Version(argparse.Action):
    """``--version``: the versions are looked up only when asked for (importlib.metadata
    is slow to import)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        import platform
        from importlib.metadata import version

        print(
            f"ferrule {version('ferrule')} (ferrule-kernel {version('ferrule-kernel')}, "
            f"Python {platform.python_version()})"
        )
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ferrule", description="ferrule: an agent runtime with plugins"
    )
    parser.add_argument("--version", action=_Version)
    parser.add_argument("--debug", action="store_true", help="log debug events to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        importlib.import_module(module).add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.debug:
        from ferrule_kernel import configure_logging

        configure_logging(debug=True)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`ferrule plugins --json | head -1`): stop quietly. Output
        # still buffered goes nowhere, or flushing it at exit would raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
