"""``ferrule models list|download|remove``: local model weights.

The work is done by the model-management operators a backend plugin registers
(``list_local_models``, ``download_model``, ``remove_model``; ferrule-llamacpp has them),
called through a `Runtime` like any other operator: the CLI imports no plugin.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ferrule_kernel import FerruleError

from .kernel import fail


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    models = subparsers.add_parser("models", help="list, download and remove local model weights")
    actions = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="the local models on this machine")
    listing.add_argument(
        "--all", action="store_true", help="also the known models not downloaded yet"
    )
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(func=_list)

    for name, help_text, func in (
        ("download", "download a model's weights (with a progress bar)", _download),
        ("remove", "remove a model's downloaded weights", _remove),
    ):
        parser = actions.add_parser(name, help=help_text)
        parser.add_argument("model", help="a model id, e.g. Qwen/Qwen3-0.6B")
        parser.set_defaults(func=func)

    for parser in actions.choices.values():
        parser.add_argument(
            "--cache-dir", help="the Hugging Face cache to use (default: its standard one)"
        )


def _call(operator: str, inputs: dict[str, Any]) -> dict[str, Any]:
    from ..runtime import Runtime

    with Runtime() as rt:
        return rt.call(operator, inputs)


def _cache(args: argparse.Namespace, inputs: dict[str, Any]) -> dict[str, Any]:
    if args.cache_dir:
        inputs["cache_dir"] = args.cache_dir
    return inputs


def _size(size: int | None) -> str:
    if size is None:
        return "-"
    return f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


def _list(args: argparse.Namespace) -> int:
    try:
        result = _call("list_local_models", _cache(args, {"all": args.all}))
    except FerruleError as exc:
        return fail(exc)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"local models (cache: {result.get('cache_dir', '-')})")
    for column in ("model", "file", "quantization", "size", "where"):
        table.add_column(column)
    for model in result["models"]:
        where = model["path"] if model["downloaded"] else "[dim]not downloaded[/dim]"
        table.add_row(
            model["model"],
            model["filename"],
            model["quantization"],
            _size(model["size_bytes"]),
            where,
        )
    Console().print(table)
    if not result["models"]:
        print("no local models yet: ferrule models list --all shows the known ones")
    return 0


def _download(args: argparse.Namespace) -> int:
    try:
        result = _call("download_model", _cache(args, {"model": args.model}))
    except FerruleError as exc:
        return fail(exc)
    print(f"{result['model']}: {result['path']} ({_size(result['size_bytes'])})")
    return 0


def _remove(args: argparse.Namespace) -> int:
    try:
        result = _call("remove_model", _cache(args, {"model": args.model}))
    except FerruleError as exc:
        return fail(exc)
    if result["removed"]:
        print(f"{result['model']}: removed, {_size(result['freed_bytes'])} freed")
    else:
        print(f"{result['model']}: not downloaded, nothing to remove")
    return 0
