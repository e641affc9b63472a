"""Replay Ailoy's own Python test files against ferrule, unchanged but for the package name.

    .nox/tests/bin/python tests/compat/ailoy/replay_ailoy.py [TAG] [-- PYTEST ARGS]

TAG is ``v0.1.0`` (the default). The files are read from the mirror of brekkylab/ailoy
(``$AILOY_MIRROR``, default ``/work/.mirror/brekkylab+ailoy/repo``) at that tag, written to
a temporary folder with ``ailoy`` replaced by ``ferrule``, and run by pytest with Ailoy's
own pytest settings (its pyproject's ``[tool.pytest.ini_options]``) and:

- ``$FERRULE_MODEL_ALIASES``: the Qwen3 ids to the offline SmolLM2, BAAI/bge-m3 to the
  offline MiniLM (the aliases of ``conftest.py`` beside this file);
- one loopback server speaking OpenAI's, Anthropic's, Gemini's and xAI's wires, found
  through ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL`` and
  ``XAI_BASE_URL``. It calls the ``calculator`` tool when a request offers it and holds no
  tool result yet (with the formula of the query), and otherwise answers a short text; at
  the end every request must have been well formed and answered.

Cases that need the internet (they download an image or a recording from a public URL
inside the test) are deselected by name, each with its reason printed. This file is a tool,
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
    }
}

CONFTEST = '''
"""Written by ferrule's tests/compat/ailoy/replay_ailoy.py: the offline models by alias and
one loopback server for every provider."""

import json
import os
import re

from ferrule_kit.messages import ToolCall
from ferrule_kit.parts import ANTHROPIC, GEMINI, OPENAI
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer

ALIASES = {aliases!r}
KEY = "sk-ailoy-replay-0123456789"
KEY_VARIABLES = (
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CLAUDE_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"
)
TOOL_RESULT_MARKS = ('"role": "tool"', '"tool_result"', '"functionResponse"')


def answer(request):
    if request.path.endswith("/messages"):
        dialect = ANTHROPIC
    elif ":streamGenerateContent" in request.path:
        dialect = GEMINI
    else:
        dialect = OPENAI
    sent = json.dumps(request.json)
    if '"calculator"' in sent and not any(mark in sent for mark in TOOL_RESULT_MARKS):
        formula = re.search(r"formula: ([^\\\\\\"]+)", sent)
        expression = formula.group(1) if formula else "1+1"
        call = ToolCall("call_1", "calculator", {{"expression": expression}})
        return reply(dialect, tool_calls=(call,))
    return reply(dialect, "Answered by the loopback server.")


def pytest_configure(config):
    # before collection: Ailoy's files decide their skips from the environment on import
    global SERVER
    os.environ["FERRULE_MODEL_ALIASES"] = ",".join(f"{{k}}={{v}}" for k, v in ALIASES.items())
    SERVER = LoopbackServer()
    SERVER.start_in_thread()
    SERVER.script(*[answer] * 1000)
    for variable, suffix in (
        ("OPENAI_BASE_URL", "/v1"),
        ("XAI_BASE_URL", "/v1"),
        ("ANTHROPIC_BASE_URL", ""),
        ("GOOGLE_GEMINI_BASE_URL", ""),
    ):
        os.environ[variable] = SERVER.url + suffix
    for variable in KEY_VARIABLES:
        os.environ[variable] = KEY


def pytest_unconfigure(config):
    SERVER.stop_in_thread()
    print(f"\\nloopback providers answered {{len(SERVER.requests)}} requests")
    SERVER.check()  # every request well formed and answered
'''


def ailoy_aliases() -> dict[str, str]:
    # the aliases of this folder's conftest.py, read without importing pytest fixtures
    sys.path.insert(0, str(Path(__file__).resolve().parent))
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
    (tests / "conftest.py").write_text(CONFTEST.format(aliases=ailoy_aliases()))
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
        targets = [a for a in extra if not a.startswith("-")] or [f"tests/{f}" for f in files]
        options = [a for a in extra if a.startswith("-")]
        command = [sys.executable, "-m", "pytest", *targets, "-p", "no:cacheprovider", "-q"]
        command += ["-rA", *deselect, *options]
        return subprocess.run(command, cwd=root).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
