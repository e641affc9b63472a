"""Every module of the agent package has its place in the package's import order (the
``agent-package-order`` contract of ``.importlinter``, which tests/test_layers.py runs):
a new module must be placed there, so that it cannot import back up unchecked."""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

import ferrule.agent

CONFIG = Path(__file__).resolve().parents[3] / ".importlinter"


def test_every_agent_module_is_in_the_import_order() -> None:
    config = configparser.ConfigParser()
    config.read(CONFIG)
    contract = config["importlinter:contract:agent-package-order"]
    assert contract["containers"].split() == ["ferrule.agent"]
    placed = {
        name.strip()
        for layer in contract["layers"].split("\n")
        for name in layer.replace(":", "|").split("|")
        if name.strip()
    }
    package = Path(ferrule.agent.__file__).parent
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    assert modules  # the glob found the package
    assert placed == modules


def _private_names_defined(tree: ast.Module) -> set[str]:
    """The underscore names a module defines: its functions, classes, module and class
    attributes, and the ``self._x`` attributes its methods set."""
    defined: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            defined.add(node.attr)
    return {name for name in defined if name.startswith("_")}


def test_no_agent_module_reaches_into_another_modules_private_names() -> None:
    """A module imports no underscore name from a sibling, and reads ``obj._x`` only where
    ``_x`` is its own (what two modules share has a public name)."""
    package = Path(ferrule.agent.__file__).parent
    reaching: list[str] = []
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _private_names_defined(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                reaching += [
                    f"{path.name}:{node.lineno} imports {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_")
                ]
            elif (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and node.attr not in own
            ):
                reaching.append(f"{path.name}:{node.lineno} reads .{node.attr}")
    assert reaching == []


def test_agent_is_composed_not_mixed_in() -> None:
    """`Agent`'s one base is the typed run calls (`RunCalls`, abstract: it declares the one
    thing it needs); everything else is a collaborator it holds."""
    from ferrule.agent.agent import Agent
    from ferrule.agent.run_calls import RunCalls

    assert [base for base in Agent.__mro__ if base.__module__.startswith("ferrule.")] == [
        Agent,
        RunCalls,
    ]
    assert RunCalls.__abstractmethods__ == frozenset({"_agent_runs"})
