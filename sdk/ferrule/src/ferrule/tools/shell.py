"""Agno's ``agno.tools.shell``: `ShellTools`, a shell command the model may run.

Commands run through ferrule-terminal's ``terminal`` operator on the process's shared runtime
(so they die with their ``timeout``, and their output is bounded). The host sets the folder
they run in (``base_dir``, default the working directory), the programs they may start
(``allowed_commands``: with a list, a command is split into words and run without a shell,
only if its program is listed; ``$FERRULE_TERMINAL_ALLOW`` narrows it further), the
``timeout`` and the output limit; the model gives only the command's words (``args``) and
how many of its last lines it reads (``tail``), and can widen none of the host's settings.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from ferrule_kernel import InvalidInputError
from ferrule_kit.network.hostpolicy import HostPolicyError

from .toolkit import Toolkit

__all__ = ["ShellTools", "run_terminal"]


def run_terminal(inputs: dict[str, Any]) -> dict[str, Any]:
    """One call of the ``terminal`` operator on the shared runtime."""
    from ..shared_runtime import default_runtime

    runtime = default_runtime()
    names = {o["name"] for o in runtime.operators()}
    if "terminal" not in names:
        raise InvalidInputError(
            "ShellTools and PythonTools run commands through ferrule-terminal, which is not "
            "installed: pip install ferrule-terminal",
            field="tools",
        )
    result: dict[str, Any] = runtime.call("terminal", inputs)
    return result


class ShellTools(Toolkit):
    """``ShellTools(base_dir=Path("work"), allowed_commands=["ls", "cat"])`` (see the module
    docstring)."""

    base_dir: Path
    allowed_commands: list[str] | None

    def __init__(
        self,
        base_dir: Path | str | None = None,
        enable_run_shell_command: bool = True,
        all: bool = False,
        *,
        allowed_commands: list[str] | None = None,
        timeout: float = 60.0,
        max_output_bytes: int = 64 * 1024,
        **kwargs: Any,
    ) -> None:
        self.base_dir = Path(base_dir or Path.cwd()).resolve()
        self.allowed_commands = list(allowed_commands) if allowed_commands is not None else None
        self.max_output_bytes = max_output_bytes
        tools = [self.run_shell_command] if enable_run_shell_command or all else []
        super().__init__(name=kwargs.pop("name", "shell_tools"), tools=tools, **kwargs)
        self.timeout = timeout

    def run_shell_command(self, args: list[str], tail: int = 100) -> str:
        """Run a command in the working folder; the last ``tail`` lines of what it printed
        (or its error).

        Args:
            args: The command's words, the program first (["ls", "-l"]).
            tail: How many of the output's last lines to return.
        """
        if not args:
            raise InvalidInputError("args names the program to run", field="args")
        if self.allowed_commands is not None and args[0] not in self.allowed_commands:
            allowed = ", ".join(self.allowed_commands) or "none"
            raise HostPolicyError(
                f"args[0]: {args[0]!r} is not among the programs the host lets this tool run "
                f"({allowed})",
                field="$.args[0]",
            )
        inputs: dict[str, Any] = {
            "command": shlex.join(args),
            "cwd": str(self.base_dir),
            "timeout": float(self.timeout or 60.0),
            "max_output_bytes": self.max_output_bytes,
        }
        if self.allowed_commands is not None:
            inputs["allow"] = self.allowed_commands
        out = run_terminal(inputs)
        if out.get("timed_out"):
            return f"Error: the command ran past {self.timeout} seconds and was stopped"
        if out["exit_code"] != 0:
            return f"Error: {out['stderr'] or out['stdout']}".rstrip()
        lines = out["stdout"].split("\n")
        return "\n".join(lines[-tail:]) if tail > 0 else ""
