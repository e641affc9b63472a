"""Replay Ailoy's own Python test files against ferrule, unchanged but for the package name.

    .nox/tests/bin/python tests/compat/ailoy/replay_ailoy.py [TAG] [-- PYTEST ARGS]

TAG is ``v0.1.0`` (the default). The files are read from the mirror of brekkylab/ailoy
(``$AILOY_MIRROR``, default ``/work/.mirror/brekkylab+ailoy/repo``) at that tag, written to
a temporary folder with ``ailoy`` replaced by ``ferrule``, and run by pytest with Ailoy's
own pytest settings (its pyproject's ``[tool.pytest.ini_options]``) and:

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
its reason printed (`NEEDS_INTERNET`). This file is a tool,
not a test (pytest does not collect it); it exits 0 with a message when the mirror is absent.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
MIRROR = Path(os.environ.get("AILOY_MIRROR", "/work/.mirror/brekkylab+ailoy/repo"))
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


def git_show(tag: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(MIRROR), "show", f"{tag}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def write_suite(tag: str, root: Path) -> list[str]:
    names = subprocess.run(
        ["git", "-C", str(MIRROR), "ls-tree", "--name-only", f"{tag}:{TESTS}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    files = [n for n in names if n.endswith(".py")]
    tests = root / "tests"
    tests.mkdir()
    for name in files:
        (tests / name).write_text(re.sub(r"\bailoy\b", "ferrule", git_show(tag, f"{TESTS}/{name}")))
    # beside pytest.ini, not in tests/: Ailoy's own tests/conftest.py (0.2's --langmodel) stays
    (root / "conftest.py").write_text((HERE / "replay_conftest.py").read_text())
    pyproject = tomllib.loads(git_show(tag, "bindings/python/pyproject.toml"))
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
    args = argv[: argv.index("--")] if "--" in argv else argv
    tag = args[0] if args else "v0.1.0"
    if not (MIRROR / "HEAD").exists() and not (MIRROR / ".git").exists():
        print(f"skipped: no mirror of brekkylab/ailoy at {MIRROR} (set $AILOY_MIRROR)")
        return 0
    with tempfile.TemporaryDirectory(prefix=f"ailoy-{tag}-") as folder:
        root = Path(folder)
        files = write_suite(tag, root)
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
