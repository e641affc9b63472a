"""Every Python block of README.md and docs/*.md runs as written, and prints what the page
says it prints: docs that cannot rot.

A page's blocks run in page order, in one folder per page (a later block may read what an
earlier one wrote), each in a process of its own. A block's output must be exactly the
lines its ``# -> ...`` comments show, when it has any. A block may ``await`` at top level
(as in ``python -m asyncio``). What a block needs is said in the markdown, in an HTML
comment just before it (or before its ``path``: caption), directives separated by
``;``:

- ``<!-- docs-test: continues -->``: run in the process of the block before it, with its
  names (the page goes on from there, as a reader's session would).
- ``<!-- docs-test: given book.txt -->``: the folder holds a text file of that name.
- ``<!-- docs-test: serve http://127.0.0.1:8080 -->``: a ``ferrule serve`` (every
  installed plugin) stands in for that address, which the block is run with instead.
- ``<!-- docs-test: skip REASON -->``: not run here (a fragment, or it needs what a test
  cannot have); it must still compile, and the test report lists it with its reason.
  ``skip`` comes last: the rest of the comment is its reason.

README.md takes no directive: a reader pastes its blocks as they are, each on its own, in
the clone's root, so each runs in a process of its own in a folder holding a copy of
README.md (which its first example reads, as its text says).

The docs link nothing outside the repository, and no tracked file names a path of one
machine (a folder of the machine that wrote it, which a user's clone does not have).

API keys are never needed: ``OPENAI_API_KEY`` is set and ``OPENAI_BASE_URL`` points at a
loopback server speaking the Chat Completions wire (`ferrule_kit.testing.chat_completions`,
validating every request), which answers with ``LOOPBACK_REPLY``. The offline model
(SmolLM2) answers blocks that name it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from ferrule_kit.stores.storage import STORAGE_DIR_ENV
from ferrule_kit.testing import chat_completions
from ferrule_kit.testing.conformance import ScriptedTurn
from ferrule_kit.testing.loopback import LoopbackServer

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
LOOPBACK_REPLY = "A reply from the loopback server."
DIRECTIVES = ("continues", "given", "serve", "skip")

_FENCE = re.compile(r"^```(\w*)\s*$")
_MARKER = re.compile(r"^<!-- docs-test: (.+?) -->$")
_CAPTION = re.compile(r"^`[^`]+`:$")


@attrs.frozen
class Block:
    page: Path
    line: int  # of the opening fence
    code: str
    directives: dict[str, str]  # directive -> its argument ("" for none)

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _directives(text: str, where: str) -> dict[str, str]:
    found: dict[str, str] = {}
    parts = text.split(";")
    for index, part in enumerate(parts):
        word, _, argument = part.strip().partition(" ")
        assert word in DIRECTIVES, f"{where}: unknown docs-test directive {word!r}"
        if word == "skip":  # the rest of the comment is its reason
            found[word] = ";".join([argument, *parts[index + 1 :]]).strip()
            break
        found[word] = argument.strip()
    return found


def page_blocks(page: Path) -> list[Block]:
    """The page's ``python`` / ``py`` blocks, with the directives of the marker before each."""
    lines = page.read_text().splitlines()
    blocks: list[Block] = []
    marker: dict[str, str] | None = None
    index = 0
    while index < len(lines):
        where = f"{page.relative_to(ROOT)}:{index + 1}"
        found = _MARKER.match(lines[index])
        fence = _FENCE.match(lines[index])
        if found:
            marker = _directives(found.group(1), where)
        elif fence:
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            if fence.group(1) in ("python", "py"):
                code = "\n".join(lines[index + 1 : end]) + "\n"
                blocks.append(Block(page, index + 1, code, marker or {}))
            else:
                assert marker is None, f"{where}: a docs-test marker before a non-Python block"
            marker = None
            index = end
        elif lines[index].strip() and not _CAPTION.match(lines[index]):
            assert marker is None, f"{where}: a docs-test marker not right before a block"
        index += 1
    return blocks


BLOCKS = [block for page in PAGES for block in page_blocks(page)]


def _groups(blocks: list[Block]) -> list[list[Block]]:
    """The blocks each process runs: a block and those that continue it."""
    groups: list[list[Block]] = []
    for block in blocks:
        if "skip" in block.directives:
            continue
        if "continues" in block.directives:
            assert groups, f"{block.name}: nothing before it to continue"
            groups[-1].append(block)
        else:
            groups.append([block])
    return groups


# Runs one group's blocks in one namespace, each block's output captured on its own; stops
# at the first that raises. Writes [{"stdout", "error"}] as JSON to the file argv[1] names.
DRIVER = r"""
import ast, asyncio, contextlib, inspect, io, json, sys, traceback

blocks = json.load(sys.stdin)
namespace = {"__name__": "__main__"}
results = []
for block in blocks:
    out, error = io.StringIO(), None
    try:
        code = compile(block["code"], block["name"], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        with contextlib.redirect_stdout(out):
            done = eval(code, namespace)
            if inspect.iscoroutine(done):
                asyncio.run(done)
    except BaseException:
        error = traceback.format_exc()
    results.append({"stdout": out.getvalue(), "error": error})
    if error is not None:
        break
with open(sys.argv[1], "w") as f:
    json.dump(results, f)
"""

BOOK = "\n\n".join(
    f"Chapter {n}. " + " ".join(f"Sentence {i} of chapter {n}." for i in range(40))
    for n in range(1, 6)
)


def test_the_docs_have_python_blocks_and_every_one_compiles():
    assert {b.page.name for b in BLOCKS} >= {"README.md", "agent.md", "memory.md", "serve.md"}
    for block in BLOCKS:
        compile(block.code, block.name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def test_the_readme_blocks_run_as_pasted_with_no_hidden_directive():
    readme = [block for block in BLOCKS if block.page == README]
    assert len(readme) >= 2
    assert all(block.directives == {} for block in readme)
    assert "docs-test" not in README.read_text()


def test_the_readme_lists_every_plugin_of_the_repository():
    text = README.read_text()
    table = text[text.index("## Plugins in this repository") :]
    table = table[: table.index("\n## ")]
    listed = set(re.findall(r"`(ferrule-[a-z0-9-]+)`", table))
    shipped = {
        re.search(r'^name = "(.+)"$', path.read_text(), re.M).group(1)  # type: ignore[union-attr]
        for path in _tracked("plugins/*/pyproject.toml")
        if path.parent.parent == ROOT / "plugins"
    }
    assert shipped - listed == set(), "plugins missing from README's table"
    assert listed - shipped == set(), "README's table lists plugins the repository lacks"


def test_every_skip_says_why():
    for block in BLOCKS:
        if "skip" in block.directives:
            assert len(block.directives["skip"]) > 10, f"{block.name}: skip without a reason"


@pytest.fixture(scope="module")
def openai_loopback():
    with LoopbackServer(validate=chat_completions.validator()) as server:
        yield server


def _run_page(page: Path, folder: Path, env: dict[str, str], server_url: str | None) -> None:
    if page == README:  # its examples run in the clone's root
        (folder / README.name).write_text(README.read_text())
    for group in _groups([b for b in BLOCKS if b.page == page]):
        payload = []
        for block in group:
            code = block.code
            if "serve" in block.directives:
                assert server_url is not None
                code = code.replace(block.directives["serve"], server_url)
            for name in block.directives.get("given", "").split():
                (folder / name).write_text(BOOK)
            payload.append({"name": block.name, "code": code})
        report = folder / ".docs-test.json"
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, str(report)],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=300,
            cwd=folder,
            env=env,
        )
        assert report.exists(), f"{group[0].name}: the process failed\n{done.stderr}"
        results = json.loads(report.read_text())
        for block, result in zip(group, results, strict=False):
            assert result["error"] is None, f"{block.name}:\n{block.code}\n{result['error']}"
            expected = re.findall(r"# -> (.*)$", block.code, re.M)
            if expected:
                assert result["stdout"].splitlines() == expected, f"{block.name}:\n{block.code}"
        assert len(results) == len(group)


RUN_PAGES = sorted({b.page for b in BLOCKS if "skip" not in b.directives})


@pytest.mark.parametrize("page", RUN_PAGES, ids=[str(p.relative_to(ROOT)) for p in RUN_PAGES])
def test_the_page_runs_as_written(page, tmp_path, openai_loopback):
    turn = ScriptedTurn(text=(LOOPBACK_REPLY,))
    openai_loopback.script(*[lambda request: chat_completions.reply(turn)] * 50)
    env = {
        **os.environ,
        STORAGE_DIR_ENV: str(tmp_path / "storage"),
        "OPENAI_API_KEY": "sk-docs-test",
        "OPENAI_BASE_URL": f"{openai_loopback.url}/v1",
    }
    if any("serve" in b.directives for b in BLOCKS if b.page == page):
        from ferrule.server import ServerThread

        with ServerThread(port=0) as url:
            _run_page(page, tmp_path, env, url)
    else:
        _run_page(page, tmp_path, env, None)
    openai_loopback.check()


SKIPPED = [b for b in BLOCKS if "skip" in b.directives]


@pytest.mark.parametrize("block", SKIPPED, ids=[b.name for b in SKIPPED])
def test_skipped_block(block):
    pytest.skip(f"{block.name}: {block.directives['skip']}")


# -- links and paths ---------------------------------------------------------------------

#: A Markdown link's or image's target: ``[text](target)``, ``![alt](<target> "title")``.
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCED = re.compile(r"^```.*?^```", re.M | re.S)
#: A folder of one machine: the workspace this repository was written in, a user's home.
_MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|Users|home/[a-z_][\w-]*)/")


def _tracked(*patterns: str) -> list[Path]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: which files the repository holds is not known")
    listing = subprocess.run(
        ["git", "ls-files", "-z", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [ROOT / name for name in listing.split("\0") if name and (ROOT / name).is_file()]


def test_every_link_of_the_docs_stays_in_the_repository_and_resolves():
    pages = _tracked("*.md")
    assert README in pages and len(pages) > 20
    bad = []
    for page in pages:
        for target in _LINK.findall(_FENCED.sub("", page.read_text())):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL, or a heading of the same page
            path = (page.parent / target.split("#")[0]).resolve()
            where = f"{page.relative_to(ROOT)}: {target}"
            if not path.is_relative_to(ROOT):
                bad.append(f"{where} (outside the repository)")
            elif not path.exists():
                bad.append(f"{where} (no such file)")
    assert bad == []


def test_no_file_names_a_folder_of_one_machine():
    found = []
    for path in _tracked():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not text
        for number, line in enumerate(text.splitlines(), 1):
            if _MACHINE_PATH.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert found == []
