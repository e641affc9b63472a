"""Replay Ailoy's own Python test files against ferrule, unchanged but for the package name.

    .nox/tests/bin/python tests/compat/ailoy/replay_ailoy.py [TAG] [--ailoy DIR] [-- PYTEST ARGS]

TAG is ``v0.1.0`` (the default) or ``v0.2.5``. The files are read from a git clone of
brekkylab/ailoy (``--ailoy DIR``, else ``$AILOY_CHECKOUT``), at that tag whatever the
clone has checked out::

    git clone https://github.com/brekkylab/ailoy.git && git -C ailoy checkout v0.1.0

They are written to a temporary folder with ``ailoy`` replaced by ``ferrule``, and run by
pytest with Ailoy's own pytest settings (its pyproject's ``[tool.pytest.ini_options]``) and:

- ``$FERRULE_MODEL_ALIASES``: the Qwen3 ids to the offline SmolLM2, BAAI/bge-m3 to the
  offline MiniLM (the aliases of ``conftest.py`` beside this file);
- one loopback server standing in for OpenAI, Anthropic, Google and xAI, found through
  ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL`` and
  ``XAI_BASE_URL``: the ``conftest.py`` written beside the tests is ``replay_conftest.py``
  (it calls the tool a request offers, answers a tool's result, and recalls the user's
  previous message; see there). Ailoy's own ``tests/conftest.py`` stays, so 0.2's
  ``--langmodel qwen3|openai|claude|gemini|grok`` chooses the model its agent cases run on:
  ``replay_ailoy.py v0.2.5 -- --langmodel=openai``. Arguments after ``--`` go to pytest
  (those starting ``tests/`` name what to run, e.g. ``tests/test_tools.py``).

Cases that need the internet (they download an image, a recording, a page or an MCP
server's package from a public address inside the test) are deselected by name, each with
its reason printed (`NEEDS_INTERNET`). This file is a tool, not a test (pytest does not
collect it). Without a clone, or with one that lacks the tag, it exits 2 saying how to get
one.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
CHECKOUT_VARIABLE = "AILOY_CHECKOUT"
REPOSITORY = "https://github.com/brekkylab/ailoy.git"
TAGS = ("v0.1.0", "v0.2.5")
TESTS = "bindings/python/tests"

#: Cases whose test body fetches a public URL itself: they need the internet.
NEEDS_INTERNET = {
    "v0.1.0": {
        "test_agent_openai.py::test_image_input_from_pillow": "urlopen() of a public image",
        "test_agent_openai.py::test_audio_input_from_base64": "urlopen() of a public recording",
        "test_agent_claude.py::test_image_input_from_pillow": "urlopen() of a public image",
        "test_agent_gemini.py::test_image_input_from_pillow": "urlopen() of a public image",
        "test_agent_gemini.py::test_audio_input_from_base64": "urlopen() of a public recording",
        "test_agent_grok.py::test_image_input_from_pillow": "urlopen() of a public image",
    },
    "v0.2.5": {
        "test_multimodal.py::test_image_base64_input": "its fixture urlopen()s a public image",
        "test_tools.py::test_builtin_web_fetch_tool": "web_fetch of a public page",
        # uvx resolves and downloads mcp-server-time from PyPI as it starts it; ferrule's
        # own tests/compat/ailoy/v0_2 cases run a local MCP time server instead
        "test_tools.py::test_mcp_tools": "uvx downloads mcp-server-time from PyPI",
        "test_agent_async.py::test_mcp_tools": "uvx downloads mcp-server-time from PyPI",
    },
}


def ailoy_aliases() -> dict[str, str]:
    # the aliases of this folder's conftest.py, read without importing pytest fixtures
    sys.path.insert(0, str(HERE))
    try:
        from conftest import ALIASES  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    return dict(ALIASES)


def checkout_problem(checkout: str | None, tag: str) -> str | None:
    """Why ``checkout`` cannot be replayed at ``tag`` (with how to get one), or None."""
    get = f"    git clone {REPOSITORY} ailoy && git -C ailoy checkout {tag}"
    if not checkout:
        return (
            f"replay_ailoy.py reads Ailoy's tests from a clone of brekkylab/ailoy: pass "
            f"--ailoy DIR or set ${CHECKOUT_VARIABLE}. To make one:\n{get}"
        )
    found = subprocess.run(
        ["git", "-C", checkout, "rev-parse", "--verify", "--quiet", f"{tag}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if found.returncode != 0:
        return (
            f"{checkout} is not a git clone of brekkylab/ailoy with the tag {tag} (a clone "
            f"made before the tag: git -C {checkout} fetch --tags). To make one:\n{get}"
        )
    return None


def git_show(checkout: str, tag: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", checkout, "show", f"{tag}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def write_suite(checkout: str, tag: str, root: Path) -> list[str]:
    names = subprocess.run(
        ["git", "-C", checkout, "ls-tree", "--name-only", f"{tag}:{TESTS}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    files = [n for n in names if n.endswith(".py")]
    tests = root / "tests"
    tests.mkdir()
    for name in files:
        (tests / name).write_text(
            re.sub(r"\bailoy\b", "ferrule", git_show(checkout, tag, f"{TESTS}/{name}"))
        )
    # beside pytest.ini, not in tests/: Ailoy's own tests/conftest.py (0.2's --langmodel) stays
    (root / "conftest.py").write_text((HERE / "replay_conftest.py").read_text())
    pyproject = tomllib.loads(git_show(checkout, tag, "bindings/python/pyproject.toml"))
    options = pyproject["tool"]["pytest"]["ini_options"]
    lines = ["[pytest]"]
    for key, value in options.items():
        if isinstance(value, list):
            lines.append(f"{key} =" + "".join(f"\n    {item}" for item in value))
        else:
            lines.append(f"{key} = {value}")
    (root / "pytest.ini").write_text("\n".join(lines) + "\n")
    return [n for n in files if n.startswith("test_")]


def main(argv: list[str]) -> int:
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    parser = argparse.ArgumentParser(
        prog="replay_ailoy.py", description="Replay Ailoy's own Python tests against ferrule."
    )
    parser.add_argument("tag", nargs="?", default=TAGS[0], choices=TAGS)
    parser.add_argument(
        "--ailoy",
        dest="checkout",
        default=os.environ.get(CHECKOUT_VARIABLE),
        metavar="DIR",
        help=f"a git clone of brekkylab/ailoy (default ${CHECKOUT_VARIABLE})",
    )
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    tag, checkout = args.tag, args.checkout
    problem = checkout_problem(checkout, tag)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix=f"ailoy-{tag}-") as folder:
        root = Path(folder)
        files = write_suite(checkout, tag, root)
        deselect = []
        for case, reason in NEEDS_INTERNET.get(tag, {}).items():
            print(f"deselected (needs the internet: {reason}): {case}")
            deselect += ["--deselect", f"tests/{case}"]
        targets = [a for a in extra if a.startswith("tests/")] or [f"tests/{f}" for f in files]
        options = [a for a in extra if not a.startswith("tests/")]
        command = [sys.executable, "-m", "pytest", *targets, "-p", "no:cacheprovider", "-q"]
        command += ["-rA", *deselect, *options]
        aliases = ",".join(f"{k}={v}" for k, v in ailoy_aliases().items())
        environment = {**os.environ, "FERRULE_MODEL_ALIASES": aliases}
        return subprocess.run(command, cwd=root, env=environment).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
