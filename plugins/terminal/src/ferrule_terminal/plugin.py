"""Registers `terminal`: one shell command, answered with its stdout, stderr and exit code.

The input class and its checks live here (standard library and attrs only); the process is
started in `ferrule_terminal.run`, imported on the first call.

A command runs with this process's rights, so it is taken from code in the same process
only (`ferrule_kernel.local_only`): a `ferrule serve` client can never run one.
"""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import (
    InvalidInputError,
    OperatorSpec,
    hookimpl,
    in_range,
    refuse_untrusted,
    text_limit,
)
from ferrule_kit.network.hostpolicy import host_policy

from . import errors as _errors  # noqa: F401  (registers the error kinds for the wire)

#: Program names (comma- or space-separated) that alone may run; see `run.allowed_argv`.
ALLOW_VARIABLE = "FERRULE_TERMINAL_ALLOW"
#: Set to 1 to refuse every command in this process (an administrator's off switch).
DISABLE_VARIABLE = "FERRULE_TERMINAL_DISABLE"
MAX_COMMAND_LENGTH = 100_000
#: The longest ``timeout`` a call may ask for, in seconds.
MAX_TIMEOUT = 3600.0
DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024


_command_length = text_limit(MAX_COMMAND_LENGTH, empty=False)


def _check_command(instance: Any, attribute: Any, value: str) -> None:
    refuse_untrusted("$.command", "a command for the server to run")
    _command_length(instance, attribute, value)
    if "\x00" in value:
        raise InvalidInputError("command must not contain NUL", field="$.command")


def _check_env(_instance: Any, _attribute: Any, value: dict[str, str]) -> None:
    for name, setting in value.items():
        if not name or "=" in name or "\x00" in name or "\x00" in setting:
            raise InvalidInputError(
                "an environment variable's name is not empty and holds no '=' or NUL, and "
                "its value holds no NUL",
                field=f"$.env[{name!r}]",
            )


def _check_allow(_instance: Any, _attribute: Any, value: list[str] | None) -> None:
    for index, program in enumerate(value or ()):
        if not program.strip() or any(c.isspace() for c in program):
            raise InvalidInputError(
                f"a program name is one word, got {program!r}", field=f"$.allow[{index}]"
            )


@attrs.frozen
class TerminalInput:
    """One command. Without an allow-list it runs in ``bash -c`` (``/bin/sh -c`` where
    there is no bash); with one (``$FERRULE_TERMINAL_ALLOW``, narrowed by ``allow``, which
    can never add a program the variable leaves out) it is split into words and run without
    a shell, and only if its program is listed. ``cwd`` is the working directory (default:
    this process's); ``env`` is added to this process's environment; ``stdin`` is written
    to the command's standard input; after ``timeout`` seconds the command and every
    process it started are killed, as they are when it ends; each of stdout and stderr
    keeps its first ``max_output_bytes`` bytes. ``timeout``, ``max_output_bytes`` and
    ``allow`` are host policies (`ferrule_kit.network.hostpolicy`): a tool never takes them from
    a model."""

    command: str = attrs.field(validator=_check_command)
    cwd: str | None = None
    env: dict[str, str] = attrs.field(factory=dict, validator=_check_env)
    stdin: str | None = None
    timeout: float = attrs.field(
        default=60.0,
        validator=in_range(0.001, MAX_TIMEOUT),
        metadata=host_policy("the command's timeout"),
    )
    max_output_bytes: int = attrs.field(
        default=DEFAULT_MAX_OUTPUT_BYTES,
        validator=in_range(1, 64 * 2**20),
        metadata=host_policy("the output limit"),
    )
    allow: list[str] | None = attrs.field(
        default=None, validator=_check_allow, metadata=host_policy("the programs that may run")
    )


@attrs.frozen
class TerminalOutput:
    stdout: str
    stderr: str
    #: The command's exit status; a command ended by a signal has minus its number.
    exit_code: int
    #: The command ran past ``timeout`` and was killed.
    timed_out: bool = False
    #: stdout or stderr was longer than ``max_output_bytes`` and was cut.
    truncated: bool = False


@hookimpl
def ferrule_register_operators() -> list[OperatorSpec]:
    return [
        OperatorSpec(
            "terminal",
            "ferrule_terminal.run:terminal",
            TerminalInput,
            outputs=TerminalOutput,
            description=(
                "Run a shell command on this machine and return its stdout, stderr and "
                "exit_code. Taken from code in the same process only."
            ),
        )
    ]
