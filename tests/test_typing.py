"""ferrule's public API is statically typed: user-style programs (tests/typing/*.py) pass
``mypy --strict`` with no error, their ``assert_type`` checks prove that public calls
return their real types rather than ``Any``, and tests/typing/mistakes.py's marked lines
are each reported (nothing else is), which they would not be were those calls ``Any``.

pyright (strict) agrees; its test runs where it is installed (``pip install pyright``,
which fetches pyright from npm on its first run): ``cd tests/typing && pyright``.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "typing"


def _expected_errors() -> set[tuple[str, int]]:
    """The ``# error`` lines of the programs, as (file name, line)."""
    return {
        (path.name, number)
        for path in sorted(PROGRAMS.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if line.rstrip().endswith("# error")
    }


def test_the_programs_cover_the_public_surface():
    text = "\n".join(p.read_text() for p in PROGRAMS.glob("*.py"))
    for call in [
        "Runtime(url=",
        "AsyncRuntime(",
        "Agent(",
        "@tool",
        "output_schema=",
        "stream=True",
        "ServerThread(",
        "openai.OpenAI(",
    ]:
        assert call in text, call
    assert len(_expected_errors()) >= 10


def test_mypy_strict_finds_exactly_the_marked_mistakes():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(PROGRAMS / "mypy.ini"),
            "--cache-dir",
            str(ROOT / ".mypy_cache" / "typing"),
            "--no-error-summary",
            "--hide-error-context",
            *sorted(str(p) for p in PROGRAMS.glob("*.py")),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    reported = {
        (Path(m.group(1)).name, int(m.group(2)))
        for m in re.finditer(r"^(.+?\.py):(\d+): error:", done.stdout, re.M)
    }
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2: mypy itself failed
    assert reported == _expected_errors(), done.stdout


@pytest.mark.skipif(importlib.util.find_spec("pyright") is None, reason="pyright not installed")
def test_pyright_strict_finds_exactly_the_marked_mistakes():
    done = subprocess.run(
        [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, "--outputjson"],
        capture_output=True,
        text=True,
        cwd=PROGRAMS,
    )
    report = json.loads(done.stdout)
    reported = {
        (Path(d["file"]).name, d["range"]["start"]["line"] + 1)
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    }
    assert reported == _expected_errors(), done.stdout


def test_every_lazy_export_is_imported_for_type_checkers():
    """`ferrule/__init__.py` imports on first access what `_LAZY` names; its
    ``if TYPE_CHECKING:`` block must import the same names from the same modules, or
    type checkers see that name as Any."""
    import ferrule

    source = Path(inspect.getfile(ferrule)).read_text()
    block = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    typed = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        module = "ferrule." + node.module if node.level else node.module
        typed.update({alias.name: module for alias in node.names})
    assert typed == ferrule._LAZY


def _keywords(function, *, besides: set[str]) -> dict[str, str]:
    """A function's keyword-only parameters and their annotations, less ``besides``."""
    return {
        name: parameter.annotation
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is parameter.KEYWORD_ONLY and name not in besides
    }


@pytest.mark.parametrize(
    ("method", "options", "besides"),
    [
        ("__init__", "AgentOptions", {"output_schema"}),
        ("run", "RunOptions", {"stream", "output_schema"}),
        ("arun", "RunOptions", {"stream", "background", "output_schema"}),
        ("query", "QueryOptions", {"output_schema"}),
    ],
)
def test_the_overloads_options_are_the_implementations_keywords(method, options, besides):
    """`Agent`'s overloads take the keyword arguments that do not decide the type as
    ``**options: Unpack[...]``: each TypedDict must list exactly the others, with the same
    annotations (an argument left out would be refused by type checkers, though the call
    works)."""
    from ferrule.agent import Agent, _typing

    listed = {
        key: getattr(hint, "__forward_arg__", hint)
        for key, hint in getattr(_typing, options).__annotations__.items()
    }
    assert listed == _keywords(getattr(Agent, method), besides=besides)


def _accepted(function) -> set[str]:
    """The argument names a signature takes, a ``**options: Unpack[TypedDict]``'s keys too."""
    from ferrule.agent import _typing

    names = set()
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind is parameter.VAR_KEYWORD:
            unpacked = re.fullmatch(r"Unpack\[(\w+)\]", parameter.annotation)
            assert unpacked, f"{function.__qualname__}: **{name} is not an Unpack[TypedDict]"
            names |= set(getattr(_typing, unpacked.group(1)).__annotations__)
        elif name != "self":
            names.add(name)
    return names


def _ailoy_form(variant) -> bool:
    """An overload of Ailoy 0.2's form (``Agent(lm)``, its ``run(messages, config)``)."""
    return "AiloyRun" in str(inspect.signature(variant).parameters["self"].annotation)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.get_overloads is 3.11+")
def test_every_overload_takes_every_argument_of_the_implementation():
    """Each overload takes what the implementation takes: Agno's form every argument (its
    ``run`` all but Ailoy's ``config``), Ailoy 0.2's form its own positional ones (``lm,
    tools, knowledge``; ``messages, config``) and, for ``Agent(lm)``, every option."""
    import typing

    from ferrule import tools
    from ferrule.agent import Agent

    ailoy_positional = {"__init__": {"lm", "tools", "knowledge"}, "run": {"messages", "config"}}
    overloaded = [
        getattr(Agent, name)
        for name in ("__init__", "query", "run", "arun", "continue_run", "acontinue_run")
    ]
    for function in overloaded:
        variants = typing.get_overloads(function)
        assert len(variants) >= 2, function.__qualname__
        name = function.__name__
        for variant in variants:
            accepted = _accepted(function)
            if _ailoy_form(variant):
                if name == "run":
                    accepted = ailoy_positional[name]
                else:
                    accepted = accepted - {"runtime", "model"} | ailoy_positional[name]
            elif name == "run":
                accepted = accepted - {"config"}
            assert _accepted(variant) == accepted, function.__qualname__
        assert any(_ailoy_form(v) for v in variants) == (name in ailoy_positional)
    # tool(function) and tool(**options) together take what the implementation takes
    # (Agno's signature, tool(*args, **kwargs): the function, or ToolOptions' keys)
    from ferrule.tools.decorator import ToolOptions

    one, other = typing.get_overloads(tools.tool)
    assert _accepted(one) | _accepted(other) == {"function", *ToolOptions.__annotations__}
