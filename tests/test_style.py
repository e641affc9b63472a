"""The style is checked, not remembered: ``nox -s tests`` (what ``.ci/run`` runs) fails when
``ruff check``, ``ruff format --check`` or ``mypy`` on the kernel, the kit and the app
report anything (issue 32). The other style rules are tests of their own: the import
contracts (``tests/test_layers.py``), the module size and docstring rule
(``tests/test_module_size.py``), private names (``tests/test_private_names.py``) and names
the docs give as code (``tests/test_doc_names.py``).

Each check runs the tool of the test environment (``nox -s tests`` installs ruff and mypy at
the versions the noxfile names) on the whole checkout, as a developer would; a failure shows
the tool's report and the command that fixes or shows it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: mypy's targets: the kernel, the kit and the app (strictness is pyproject's [tool.mypy]).
TYPED = ("kernel/src", "sdk/kit/src", "sdk/ferrule/src")


def _tool(name: str) -> str:
    """The test environment's own copy of a tool (next to its Python), else the PATH's."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if (Path(folder) / name).exists():
            return str(Path(folder) / name)
    pytest.fail(f"{name} is not installed: nox -s tests installs it (pip install {name})")


def _check(*command: str, fix: str, timeout: float) -> None:
    """Run ``command`` in the checkout; fail with its report and ``fix`` unless it exits 0."""
    done = subprocess.run(
        list(command), cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{fix}\n{done.stdout}{done.stderr}", pytrace=False)


def test_ruff_finds_nothing() -> None:
    _check(
        _tool("ruff"),
        "check",
        "--no-cache",
        ".",
        fix="ruff check reports these (ruff check --fix . fixes those marked [*]):",
        timeout=120,
    )


def test_the_code_is_formatted() -> None:
    _check(
        _tool("ruff"),
        "format",
        "--check",
        "--no-cache",
        ".",
        fix="ruff format would change these files (run ruff format .):",
        timeout=120,
    )


@pytest.mark.timeout(900)  # about 35 s of CPU from a cold cache; much less once cached
def test_mypy_finds_nothing_in_the_kernel_kit_and_app() -> None:
    _check(
        sys.executable,
        "-m",
        "mypy",
        *TYPED,
        fix=f"mypy {' '.join(TYPED)} reports these:",
        timeout=850,
    )
