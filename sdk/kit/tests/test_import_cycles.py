"""The kit's modules import one way: no module imports itself back, directly or around a
loop of others (``a`` imports ``b`` imports ``c`` imports ``a``).

Every import a module runs counts, at the top or inside a function (a lazy import still
closes a loop the day it runs); imports under ``if TYPE_CHECKING:`` do not (they never
run: annotations only). A loop names its modules in the failure.
"""

from __future__ import annotations

import ast
from pathlib import Path

import ferrule_kit

ROOT = Path(ferrule_kit.__file__).parent
PACKAGE = "ferrule_kit"


def _module_name(path: Path) -> str:
    parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The dotted names ``tree`` imports (``from . import x`` as ``package.x``), skipping
    what only a type checker reads."""
    found: set[str] = set()
    todo = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                todo.extend(child.orelse)  # type: ignore[attr-defined]
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = module.split(".")[: None if is_package else -1]
                    base = base[: len(base) - (child.level - 1)]
                    origin = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    origin = child.module or ""
                found.add(origin)
                found.update(f"{origin}.{alias.name}" for alias in child.names)
            todo.append(child)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each kit module -> the kit modules it imports."""
    paths = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        edges = set()
        for name in _imported(ast.parse(path.read_text()), module, path.name == "__init__.py"):
            while name and name not in paths:  # ``from .x import y``: y may be a name in x
                name = name.rpartition(".")[0]
            if name and name != module and name != PACKAGE:
                edges.add(name)
        graph[module] = edges
    return graph


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_kit_module_imports_itself_back() -> None:
    graph = import_graph()
    assert "ferrule_kit.content.messages" in graph["ferrule_kit.models.lm"]  # the graph was read
    assert loops(graph) == []


def test_the_check_finds_a_loop_and_ignores_type_checking_imports() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "from .b import x\n"
        "if TYPE_CHECKING:\n    from .c import y\n"
        "def f():\n    from . import d\n"
    )
    assert _imported(tree, "ferrule_kit.a", False) >= {"ferrule_kit.b", "ferrule_kit.d"}
    assert "ferrule_kit.c" not in _imported(tree, "ferrule_kit.a", False)
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert loops(graph) == [["a", "b", "c"]]
