"""``ferrule plugins``: what is installed, what each plugin registers and does, what is broken.

Three forms (``--format``): ``table`` (the default on a terminal: one row per plugin, the
names it registers; ``--all`` adds what each one does), ``lines`` (the default elsewhere,
for a pipe or a log: one line per plugin, ``--all`` one line per registered name with its
description, columns that ``grep``, ``cut`` and ``awk`` can split) and ``json`` (every
field, ``--json`` for short).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

#: Hooks besides operators and component types, as the role they give a plugin.
ROLES = {
    "ferrule_register_part_types": "content types",
    "ferrule_resolve_api_model": "API model ids",
    "ferrule_resolve_local_model": "local model ids",
    "ferrule_resolve_embedder": "embedder ids",
    "ferrule_place_component": "placement",
    "ferrule_instrumentation": "instrumentation",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plugins",
        help="list installed plugins, what each registers, and what that does",
        description="Installed plugins: what each registers, and whether it loads. On a "
        "terminal a table, elsewhere a line per plugin; --all adds what each registered "
        "name does.",
    )
    parser.add_argument(
        "--format",
        choices=("table", "lines", "json"),
        default=None,
        help="table (default on a terminal), lines (default elsewhere: one line per plugin, "
        "or per registered name with --all), json",
    )
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.add_argument(
        "--all",
        action="store_true",
        help="each operator and component type with its description",
    )
    parser.set_defaults(func=_plugins)


def installed_plugins() -> list[dict[str, Any]]:
    """`Kernel.plugins` with each registered name's ``descriptions`` and the plugin's other
    ``hooks`` (part types, model resolution, placement, instrumentation)."""
    from ferrule_kernel import Kernel

    kernel = Kernel()
    infos = kernel.plugins()
    registry = kernel.registry
    specs = {**registry.operators, **registry.component_types}
    manager = kernel.plugin_manager
    for info in infos:
        info["descriptions"] = {
            name: specs[name].spec.description if name in specs else ""
            for name in [*info["operators"], *info["component_types"]]
        }
        plugin = manager.get_plugin(info["name"])
        callers = (manager.get_hookcallers(plugin) or []) if plugin is not None else []
        info["hooks"] = sorted(caller.name for caller in callers if caller.name in ROLES)
        info["part_types"] = _part_types(manager, info["name"])
    return infos


def _part_types(manager: Any, plugin: str) -> list[str]:
    """The names of the content part types a plugin registers (its hook returns
    descriptions only: nothing of the plugin's is imported); [] where it fails, which the
    first message with such a part then reports."""
    names = []
    for hook in manager.hook.ferrule_register_part_types.get_hookimpls():
        if hook.plugin_name == plugin:
            try:
                names += [part_type.name for part_type in hook.function()]
            except Exception:
                return []
    return names


def _registers(info: dict[str, Any]) -> str:
    """What a plugin registers, in one line: ``operators: a, b; component types: c; ...``."""
    parts = [
        f"{label}: {', '.join(info[key])}"
        for label, key in (("operators", "operators"), ("component types", "component_types"))
        if info[key]
    ]
    parts += [
        f"{ROLES[hook]}: {', '.join(info['part_types'])}"
        if hook == "ferrule_register_part_types" and info["part_types"]
        else ROLES[hook]
        for hook in info["hooks"]
    ]
    return "; ".join(parts) or "-"


def _status(info: dict[str, Any]) -> str:
    return f"broken: {info['error']}" if info["error"] else "ok"


def _columns(rows: list[list[str]]) -> str:
    """Rows as aligned columns (two spaces apart); the last column is not padded."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join(
            [*(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)), row[-1]]
        ).rstrip()
        for row in rows
    )


def _lines(infos: list[dict[str, Any]], detailed: bool) -> str:
    if not detailed:
        return _columns(
            [
                [
                    info["name"],
                    info["distribution"] or "-",
                    info["version"] or "-",
                    "broken" if info["error"] else "ok",
                    _registers(info) + (f" (error: {info['error']})" if info["error"] else ""),
                ]
                for info in infos
            ]
        )
    rows = []
    for info in infos:
        named = [
            [info["name"], kind, name, info["descriptions"][name] or "-"]
            for kind, key in (("operator", "operators"), ("component", "component_types"))
            for name in info[key]
        ]
        named += [
            [info["name"], "content", name, "a content part type"] for name in info["part_types"]
        ]
        named += [
            [info["name"], "hook", hook, ROLES[hook]]
            for hook in info["hooks"]
            if hook != "ferrule_register_part_types" or not info["part_types"]
        ]
        if info["error"]:
            named.append([info["name"], "broken", "-", info["error"]])
        rows += named or [[info["name"], "-", "-", "registers nothing"]]
    return _columns(rows)


def _table(infos: list[dict[str, Any]], detailed: bool) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="ferrule plugins", show_lines=detailed)
    for column in ("plugin", "distribution", "version", "registers", "status"):
        table.add_column(column)
    for info in infos:
        if detailed:
            registers = "\n".join(
                [
                    f"[bold]{kind} {name}[/bold]\n[dim]{escape(info['descriptions'][name])}[/dim]"
                    if info["descriptions"][name]
                    else f"[bold]{kind} {name}[/bold]"
                    for kind, key in (
                        ("operator", "operators"),
                        ("component type", "component_types"),
                    )
                    for name in info[key]
                ]
                + [f"[bold]content type {name}[/bold]" for name in info["part_types"]]
                + [
                    f"[bold]{ROLES[hook]}[/bold]"
                    for hook in info["hooks"]
                    if hook != "ferrule_register_part_types" or not info["part_types"]
                ]
            )
        else:
            registers = escape(_registers(info))
        status = (
            f"[red]broken: {escape(info['error'])}[/red]" if info["error"] else "[green]ok[/green]"
        )
        table.add_row(
            info["name"],
            info["distribution"] or "-",
            info["version"] or "-",
            registers or "-",
            status,
        )
    console = Console()
    console.print(table)
    if not detailed:
        console.print("[dim]ferrule plugins --all: what each one does[/dim]")


def _plugins(args: argparse.Namespace) -> int:
    infos = installed_plugins()
    form = "json" if args.json else args.format
    if form is None:
        form = "table" if sys.stdout.isatty() else "lines"
    if form == "json":
        print(json.dumps(infos, indent=2))
    elif form == "lines":
        print(_lines(infos, args.all))
    else:
        _table(infos, args.all)
    return 0
