"""Functions a reader can hold in their head (issue 32): no function of the kernel, the kit
or the app takes more than 6 positional parameters (past six, a call's arguments are a
list of values to match by position, and two of one type swap unnoticed: pass an object,
or make them keyword-only), and no function of the agent package is 100 lines or more
(the turn loop is named steps, each testable alone).

A peer's public signature whose callers pass more than six arguments by position keeps
them (users call it as the peer's docs show): `PEER_SIGNATURES`, each with whose it is; a
test fails once one of them is no longer over the limit, so the list only shrinks. Agno's
API is not among them: Agno's callers pass by position only the parameters up to the first
with a default (what tests/compat/agno's inventory checks), so ferrule's counterparts take
the rest keyword-only. Everything else holds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("kernel/src", "sdk/kit/src", "sdk/ferrule/src")
AGENT_PACKAGE = ROOT / "sdk/ferrule/src/ferrule/agent"
MAX_POSITIONAL = 6
MAX_LINES = 100

#: Public signatures that are a peer's, positional parameters and all: "path::qualname".
PEER_SIGNATURES = {
    "sdk/ferrule/src/ferrule/vector_store.py::VectorStore.__init__": (
        "Ailoy 0.1's VectorStore(runtime, embedding_model_name, vector_store_name, url, ...)"
    ),
    "sdk/ferrule/src/ferrule/webchat/app.py::WebChat.respond": (
        "Gradio calls an event handler with its input components' values, in order"
    ),
    "sdk/ferrule/src/ferrule/webchat/app.py::WebChat.blocks.respond": (
        "Gradio calls an event handler with its input components' values, in order"
    ),
}


def _functions(path: Path) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a module with its qualified name (``Class.method``)."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, Any]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(path.read_text(encoding="utf-8")), "")


def _positional(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    names = [a.arg for a in function.args.posonlyargs + function.args.args]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names)


def _too_many_positional() -> dict[str, int]:
    found = {}
    for source in SOURCES:
        for path in sorted((ROOT / source).rglob("*.py")):
            for name, function in _functions(path):
                if (count := _positional(function)) > MAX_POSITIONAL:
                    found[f"{path.relative_to(ROOT)}::{name}"] = count
    return found


def test_no_function_takes_more_than_six_positional_parameters() -> None:
    over = {
        name: count for name, count in _too_many_positional().items() if name not in PEER_SIGNATURES
    }
    assert over == {}, (
        f"more than {MAX_POSITIONAL} positional parameters: take one object (attrs, "
        f"frozen) or make the options keyword-only: {over}"
    )


def test_the_exceptions_are_still_exceptions() -> None:
    """Each peer's signature listed is still the peer's shape, over the limit."""
    over = _too_many_positional()
    assert sorted(set(PEER_SIGNATURES) - set(over)) == [], "no longer over: remove it"


def test_no_function_of_the_agent_package_is_100_lines_or_more() -> None:
    long = {
        f"{path.name}::{name}": lines
        for path in sorted(AGENT_PACKAGE.glob("*.py"))
        for name, function in _functions(path)
        if (lines := (function.end_lineno or function.lineno) - function.lineno + 1) >= MAX_LINES
    }
    assert long == {}, f"split into named steps (under {MAX_LINES} lines each): {long}"
