"""Rooms by concern (issue 32): in one package tree (the kernel's, the kit's, the app's, each
plugin's), no two source modules share a file name unless a reason is stated here; and the
repository imports the kit by its paths now, never by the old flat ones it still answers
(``ferrule_kit.MOVED_MODULES``, for plugins written before the kit was grouped), and the
plugin authors' page (docs/plugins.md) lists each old path with its new one.

A shared name is allowed when every module of the group but one is listed below with its
reason: a reader who meets ``settings.py`` twice in one tree should find the why here, not
guess it. docs/architecture.md states the same reasons.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from ferrule_kit import MOVED_MODULES

ROOT = Path(__file__).resolve().parent.parent

#: Names every package may have: a package's ``__init__`` and its ``python -m`` entry point.
EVERY_PACKAGE = {"__init__.py", "__main__.py"}

#: Agno's public module layout, kept so that Agno programs import from the same paths with
#: ``agno`` replaced by ``ferrule`` (docs/coming-from-agno.md): the names are Agno's.
AGNO_LAYOUT = {
    "agent/agent.py",
    "session/agent.py",
    "run/agent.py",
    "run/base.py",
    "context/backend.py",
    "context/provider.py",
    "context/wiki/backend.py",
    "context/wiki/provider.py",
    "context/database/provider.py",
    "context/workspace/provider.py",
    "context/fs/provider.py",
    "vectordb/base.py",
    "vectordb/search.py",
    "guardrails/base.py",
    "guardrails/openai.py",
    "models/base.py",
    "models/fallback.py",
    "models/metrics.py",
    "models/anthropic/claude.py",
    "models/google/gemini.py",
    "models/ollama/chat.py",
    "models/ollama/responses.py",
    "models/openai/chat.py",
    "models/openai/responses.py",
    "utils/models/claude.py",
    "utils/media.py",
    "media.py",
    "metrics.py",
    "knowledge/knowledge.py",
    "knowledge/types.py",
    "knowledge/embedder/base.py",
    "knowledge/embedder/openai.py",
    "knowledge/document/base.py",
    "knowledge/reader/base.py",
    "db/base.py",
    "db/schemas/knowledge.py",
    "db/schemas/memory.py",
    "db/schemas/metrics.py",
    "memory/manager.py",
    "memory/strategies/base.py",
    "memory/strategies/types.py",
    "reasoning/manager.py",
    "reasoning/gemini.py",
    "reasoning/openai.py",
    "compression/manager.py",
    "tools/knowledge.py",
    "tools/memory.py",
    "tools/reasoning.py",
}

#: Each package tree's modules (paths under the tree) that may share a file name, by reason.
REASONS: dict[str, dict[str, set[str]]] = {
    "ferrule_kit": {
        "a test kit is named after the contract it tests (ferrule_kit.testing.storage tests "
        "ferrule_kit.stores.storage)": {
            "testing/chat_completions.py",
            "testing/embedding.py",
            "testing/storage.py",
            "testing/vectors.py",
        },
    },
    "ferrule": {
        "Agno's module layout": AGNO_LAYOUT,
        "a CLI module is named after its command (cli/chat.py is `ferrule chat`)": {
            "cli/batch.py",
            "cli/chat.py",
            "cli/knowledge.py",
            "cli/sessions.py",
        },
        "a server package's application module (ferrule serve's aiohttp app, the web "
        "chat's Gradio app): the package names the server": {
            "server/app.py",
            "webchat/app.py",
        },
    },
}


def package_trees() -> dict[str, Path]:
    """Each top-level package of the repository (kernel, kit, app, plugins) -> its folder."""
    sources = [ROOT / "kernel" / "src", *(ROOT / "sdk").glob("*/src"), *ROOT.glob("plugins/*/src")]
    return {
        package.name: package
        for src in sources
        for package in sorted(src.iterdir())
        if (package / "__init__.py").is_file()
    }


def shared_names(tree: Path) -> dict[str, list[str]]:
    """File name -> the modules of ``tree`` that have it, for names more than one has."""
    modules: dict[str, list[str]] = defaultdict(list)
    for path in sorted(tree.rglob("*.py")):
        if path.name not in EVERY_PACKAGE:
            modules[path.name].append(path.relative_to(tree).as_posix())
    return {name: paths for name, paths in modules.items() if len(paths) > 1}


def unexplained(tree: str, shared: dict[str, list[str]]) -> list[str]:
    excused = set().union(*REASONS.get(tree, {}).values())
    return [
        f"{tree}: {name} is {', '.join(paths)}"
        for name, paths in sorted(shared.items())
        if len([path for path in paths if path not in excused]) > 1
    ]


def test_the_trees_are_every_package_of_the_repository() -> None:
    trees = package_trees()
    assert {"ferrule_kernel", "ferrule_kit", "ferrule", "ferrule_openai"} <= set(trees)
    assert len(trees) == 3 + len(list(ROOT.glob("plugins/*/src")))


def test_no_two_modules_of_one_tree_share_a_file_name_without_a_reason() -> None:
    problems = [
        problem
        for name, tree in package_trees().items()
        for problem in unexplained(name, shared_names(tree))
    ]
    assert problems == [], "rename one, or state the reason in REASONS:\n" + "\n".join(problems)


def test_each_excused_module_exists_and_shares_its_name() -> None:
    trees = package_trees()
    stale = []
    for tree, reasons in REASONS.items():
        shared = {path for paths in shared_names(trees[tree]).values() for path in paths}
        stale += [f"{tree}/{path}" for paths in reasons.values() for path in paths - shared]
    assert stale == [], "no longer shares its name (remove it from REASONS):\n" + "\n".join(stale)


def test_the_rule_finds_a_planted_twin(tmp_path: Path) -> None:
    for path in ("a/helpers.py", "b/helpers.py", "testing/storage.py", "stores/storage.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text('"""A module."""\n')
    (tmp_path / "a" / "__init__.py").write_text("")
    (tmp_path / "b" / "__init__.py").write_text("")
    found = unexplained("ferrule_kit", shared_names(tmp_path))
    assert found == ["ferrule_kit: helpers.py is a/helpers.py, b/helpers.py"]


#: Where the repository's own code and docs name modules: folders (their Python, Markdown
#: and configuration files) and single files.
SCANNED = ("kernel", "sdk", "plugins", "tests", "bench", "docs", "examples", "clients/node/test")
SCANNED_FILES = ("README.md", "pyproject.toml", "noxfile.py", ".importlinter")
OLD_PATH = re.compile(
    r"(?<![\w.])ferrule_kit[./](" + "|".join(sorted(MOVED_MODULES, key=len, reverse=True)) + r")\b"
    r"|^\s*from ferrule_kit import (?:\w+(?: as \w+)?,\s*)*(" + "|".join(MOVED_MODULES) + r")\b",
    re.MULTILINE,
)
#: The files that name the old paths on purpose: the table and its tests. The plugin
#: authors' page names them in its section on the kit's modules only (`OLD_PATHS_SECTION`).
NAMES_OLD_PATHS = {
    "sdk/kit/src/ferrule_kit/__init__.py",
    "sdk/kit/tests/test_moved_modules.py",
    "tests/test_module_names.py",
}
PLUGINS_PAGE = ROOT / "docs" / "plugins.md"
OLD_PATHS_SECTION = re.compile(r"^## The kit's modules$.*?(?=^## )", re.MULTILINE | re.DOTALL)


def scanned_text(path: Path) -> str:
    """What of ``path`` must name no old path: all of it, but the plugin authors' page's
    section on the kit's modules (kept as blank lines, so line numbers hold)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path == PLUGINS_PAGE:
        text = OLD_PATHS_SECTION.sub(lambda section: "\n" * section.group(0).count("\n"), text)
    return text


def test_the_repository_uses_the_kits_paths_now() -> None:
    files = [ROOT / name for name in SCANNED_FILES if (ROOT / name).is_file()] + [
        path
        for folder in SCANNED
        for path in (ROOT / folder).rglob("*")
        if path.suffix in {".py", ".md", ".toml", ".cfg", ".txt"}
        and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)  # caches
        and path.is_file()
    ]
    old = [
        f"{path.relative_to(ROOT)}:{text[: match.start()].count(chr(10)) + 1}: {match.group(0)}"
        for path in files
        if path.relative_to(ROOT).as_posix() not in NAMES_OLD_PATHS
        for text in [scanned_text(path)]
        for match in OLD_PATH.finditer(text)
    ]
    assert old == [], "use the new path (ferrule_kit.MOVED_MODULES maps each):\n" + "\n".join(old)


@pytest.mark.parametrize("old", ["ferrule_kit.messages", "from ferrule_kit import lm, errors"])
def test_the_scan_sees_an_old_path(old: str) -> None:
    assert OLD_PATH.search(f"x = 1\n{old}\n")
    assert not OLD_PATH.search("from ferrule_kit.content.messages import Message\n")
    assert not OLD_PATH.search("from ferrule_kit.testing.storage import StorageConformance\n")


def test_the_plugin_authors_page_lists_every_old_path() -> None:
    section = OLD_PATHS_SECTION.search(PLUGINS_PAGE.read_text(encoding="utf-8"))
    assert section is not None, "docs/plugins.md has no section '## The kit's modules'"
    rows = re.findall(r"^\| `ferrule_kit\.(\w+)` \| `ferrule_kit\.([\w.]+)` \|$", section[0], re.M)
    assert dict(rows) == MOVED_MODULES
