"""One concern a module: every source module of the kernel, the kit, the app and every plugin
(``plugins/*/src``) is at most 600 lines and opens with a docstring that says what it is for
(issues 23 and 32). A module over the cap is split by concern, not trimmed of its comments."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (
    "kernel/src",
    "sdk/kit/src",
    "sdk/ferrule/src",
    *(str(path.relative_to(ROOT)) for path in sorted(ROOT.glob("plugins/*/src"))),
)
MAX_LINES = 600


def _modules() -> list[Path]:
    return sorted(path for source in SOURCES for path in (ROOT / source).rglob("*.py"))


def test_the_sources_are_found() -> None:
    found = {path.relative_to(ROOT).parts[0:2] for path in _modules()}
    assert {("kernel", "src"), ("sdk", "kit"), ("sdk", "ferrule")} <= found
    plugins = {path.parent.name for path in ROOT.glob("plugins/*/pyproject.toml")}
    assert plugins and {part for top, part in found if top == "plugins"} == plugins


def test_every_module_is_at_most_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these modules by concern (at most {MAX_LINES} lines): {long}"


def test_every_module_opens_with_a_docstring() -> None:
    missing = [
        str(path.relative_to(ROOT))
        for path in _modules()
        if not (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").strip()
    ]
    assert missing == [], f"say in a first-line docstring what these modules are for: {missing}"
