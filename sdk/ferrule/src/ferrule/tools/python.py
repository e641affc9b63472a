"""Agno's ``agno.tools.python``: `PythonTools`, Python code the model may write and run.

Each run is its own Python process (this interpreter's), started through ferrule-terminal's
``terminal`` operator in the working folder: it dies with the host's ``timeout``, its output
is bounded, and it shares nothing with this process (so variables do not carry from one run
to the next: a run that needs another's results reads the files it wrote). The host sets the
folder (``base_dir``), whether file names must stay in it (``restrict_to_base_dir``), the
``timeout`` and which packages the model may install (``allowed_packages``: None, every
package, as Agno's; a list, those only); the model's arguments change none of these.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ferrule_kernel import InvalidInputError
from ferrule_kit.network.hostpolicy import HostPolicyError

from .file import outside
from .shell import run_terminal
from .toolkit import Toolkit

__all__ = ["PythonTools", "warn"]

_LOG = logging.getLogger("ferrule")
ONE_PROCESS = "each run is its own Python process: give the code its inputs in files or in the code"


@functools.cache
def warn() -> None:
    """Say once that the model runs code of its own making on this machine."""
    _LOG.warning("PythonTools runs code the model writes: keep a person watching")


def _wrapped(code: str, variable: str | None, marker: str) -> str:
    """``code``, then (when asked) the printed ``repr`` of ``variable`` after ``marker``."""
    if not variable:
        return code
    tail = (
        f"\n\nimport json as _ferrule_json\n"
        f"print({marker!r} + _ferrule_json.dumps("
        f"str(globals()[{variable!r}]) if {variable!r} in globals() else None))\n"
    )
    return code + tail


class PythonTools(Toolkit):
    """``PythonTools(base_dir=Path("work"))`` (see the module docstring)."""

    base_dir: Path
    restrict_to_base_dir: bool
    allowed_packages: list[str] | None

    def __init__(
        self,
        base_dir: Path | None = None,
        safe_globals: dict[str, Any] | None = None,
        safe_locals: dict[str, Any] | None = None,
        restrict_to_base_dir: bool = True,
        *,
        allowed_packages: list[str] | None = None,
        timeout: float = 60.0,
        **kwargs: Any,
    ) -> None:
        for name, value in (("safe_globals", safe_globals), ("safe_locals", safe_locals)):
            if value is not None:
                raise InvalidInputError(f"{name}: {ONE_PROCESS}", field=name)
        self.base_dir = Path(base_dir or Path.cwd()).resolve()
        self.restrict_to_base_dir = restrict_to_base_dir
        self.allowed_packages = list(allowed_packages) if allowed_packages is not None else None
        tools: list[Callable[..., Any]] = [
            self.save_to_file_and_run,
            self.run_python_code,
            self.pip_install_package,
            self.uv_pip_install_package,
            self.run_python_file_return_variable,
            self.read_file,
            self.list_files,
        ]
        super().__init__(name=kwargs.pop("name", "python_tools"), tools=tools, **kwargs)
        self.timeout = timeout

    @property
    def safe_globals(self) -> dict[str, Any]:
        """The globals a run starts with: none of this process's (each run is its own)."""
        return {}

    @property
    def safe_locals(self) -> dict[str, Any]:
        """The locals a run starts with: none of this process's (each run is its own)."""
        return {}

    def _path(self, file_name: str, tool: str) -> Path:
        target = (self.base_dir / file_name).resolve()
        inside = target == self.base_dir or self.base_dir in target.parents
        if self.restrict_to_base_dir and not inside:
            raise outside(tool, "file_name", file_name, "its base directory")
        return target

    def _run(self, argv: list[str], variable: str | None, marker: str) -> str:
        import shlex

        out = run_terminal(
            {
                "command": shlex.join(argv),
                "cwd": str(self.base_dir),
                "timeout": float(self.timeout or 60.0),
            }
        )
        if out.get("timed_out"):
            return f"Error running python code: it ran past {self.timeout} seconds and was stopped"
        if out["exit_code"] != 0:
            lines = [line for line in (out["stderr"] or out["stdout"]).splitlines() if line.strip()]
            # the exception, as Agno gives it (the traceback would point into ferrule's wrapper)
            return f"Error running python code: {lines[-1].strip() if lines else out['exit_code']}"
        if not variable:
            return ""
        for line in out["stdout"].splitlines():
            if line.startswith(marker):
                value = json.loads(line[len(marker) :])
                return f"Variable {variable} not found" if value is None else str(value)
        return f"Variable {variable} not found"

    def run_python_code(self, code: str, variable_to_return: str | None = None) -> str:
        """Run Python code; the value of ``variable_to_return`` when named, else a
        confirmation (or the error).

        Args:
            code: The code to run.
            variable_to_return: A variable whose value to return.
        """
        warn()
        marker = f"@@ferrule-{uuid.uuid4().hex}@@"
        with tempfile.TemporaryDirectory(prefix="ferrule-python-") as folder:
            script = Path(folder) / "code.py"
            script.write_text(_wrapped(code, variable_to_return, marker), encoding="utf-8")
            result = self._run([sys.executable, str(script)], variable_to_return, marker)
        return result or "successfully ran python code"

    def save_to_file_and_run(
        self,
        file_name: str,
        code: str,
        variable_to_return: str | None = None,
        overwrite: bool = True,
    ) -> str:
        """Save Python code to a file and run it; the value of ``variable_to_return`` when
        named, else the file's name.

        Args:
            file_name: The file, relative to the folder (ending in .py).
            code: The code to save and run.
            variable_to_return: A variable whose value to return.
            overwrite: Replace the file if it exists.
        """
        warn()
        path = self._path(file_name, "save_to_file_and_run")
        if path.exists() and not overwrite:
            return f"File {file_name} already exists"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
        return (
            self.run_python_file_return_variable(file_name, variable_to_return)
            if variable_to_return
            else (self._run([sys.executable, str(path)], None, "") or f"successfully ran {path}")
        )

    def run_python_file_return_variable(
        self, file_name: str, variable_to_return: str | None = None
    ) -> str:
        """Run a Python file of the folder; the value of ``variable_to_return`` when named,
        else a confirmation.

        Args:
            file_name: The file, relative to the folder.
            variable_to_return: A variable whose value to return.
        """
        warn()
        path = self._path(file_name, "run_python_file_return_variable")
        marker = f"@@ferrule-{uuid.uuid4().hex}@@"
        with tempfile.TemporaryDirectory(prefix="ferrule-python-") as folder:
            script = Path(folder) / "run.py"
            code = f"import runpy\nglobals().update(runpy.run_path({str(path)!r}, run_name='__main__'))\n"
            script.write_text(_wrapped(code, variable_to_return, marker), encoding="utf-8")
            result = self._run([sys.executable, str(script)], variable_to_return, marker)
        return result or f"successfully ran {path}"

    def read_file(self, file_name: str) -> str:
        """The text of a file of the folder.

        Args:
            file_name: The file, relative to the folder.
        """
        return self._path(file_name, "read_file").read_text(encoding="utf-8")

    def list_files(self) -> str:
        """The files of the folder, as a comma-separated list."""
        return ", ".join(sorted(p.name for p in self.base_dir.iterdir()))

    def _install(self, argv: list[str], package_name: str, tool: str) -> str:
        if self.allowed_packages is not None and package_name not in self.allowed_packages:
            allowed = ", ".join(self.allowed_packages) or "none"
            raise HostPolicyError(
                f"package_name: {package_name!r} is not among the packages the host lets "
                f"{tool!r} install ({allowed})",
                field="$.package_name",
            )
        warn()
        result = self._run([*argv, package_name], None, "")
        return result or f"successfully installed package {package_name}"

    def pip_install_package(self, package_name: str) -> str:
        """Install a package with pip into this Python.

        Args:
            package_name: The package to install.
        """
        return self._install(
            [sys.executable, "-m", "pip", "install"], package_name, "pip_install_package"
        )

    def uv_pip_install_package(self, package_name: str) -> str:
        """Install a package with uv into this Python.

        Args:
            package_name: The package to install.
        """
        argv = ["uv", "pip", "install", "--python", sys.executable]
        return self._install(argv, package_name, "uv_pip_install_package")
