"""Running one command: a subprocess in a session of its own (so a timeout kills every
process it started), its output read as it comes and cut at the limit, never buffered
whole."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import signal
from typing import TYPE_CHECKING

from ferrule_kernel import InvalidInputError

from .errors import TerminalError
from .plugin import ALLOW_VARIABLE, DISABLE_VARIABLE, TerminalOutput

if TYPE_CHECKING:
    from .plugin import TerminalInput

#: How long the pipes may stay open once the command has ended or been killed (a
#: daemonised grandchild can hold them).
_DRAIN_SECONDS = 2.0
_SHELL_OPERATORS = frozenset("();<>|&")


def allowed_programs(listed: list[str] | None) -> list[str] | None:
    """The allow-list in force: the call's, else ``$FERRULE_TERMINAL_ALLOW``; None: none."""
    if listed is not None:
        return listed
    setting = os.environ.get(ALLOW_VARIABLE, "").strip()
    return re.split(r"[,\s]+", setting) if setting else None


def allowed_argv(command: str, programs: list[str]) -> list[str]:
    """``command`` split into words (quotes as a POSIX shell reads them) to run without a
    shell, if its program is listed; a shell operator (``; | & < > ( )``) is refused, since
    no shell will read it."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError as exc:
        raise InvalidInputError(
            f"command cannot be split into words: {exc}", field="$.command"
        ) from None
    for word in words:
        if word and set(word) <= _SHELL_OPERATORS:
            raise TerminalError(
                f"command uses the shell operator {word!r}; with an allow-list, commands run "
                "without a shell",
                reason="not_allowed",
            )
    if not words:
        raise InvalidInputError("command must not be empty", field="$.command")
    if words[0] not in programs:
        raise TerminalError(
            f"program {words[0]!r} is not in the allow-list ({', '.join(programs)})",
            reason="not_allowed",
        )
    return words


def _argv(inputs: TerminalInput) -> list[str]:
    if os.environ.get(DISABLE_VARIABLE, "").strip() not in ("", "0"):
        raise TerminalError(
            f"the terminal is disabled here ({DISABLE_VARIABLE})", reason="disabled"
        )
    programs = allowed_programs(inputs.allow)
    if programs is not None:
        return allowed_argv(inputs.command, programs)
    shell = shutil.which("bash") or "/bin/sh"
    return [shell, "-c", inputs.command]


class _Capture:
    """The first ``limit`` bytes of a stream; the rest is read and counted, not kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.seen = 0

    async def read(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(64 * 1024):
            room = self.limit - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.seen += len(chunk)

    @property
    def truncated(self) -> bool:
        return self.seen > self.limit

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")


async def _feed(process: asyncio.subprocess.Process, data: str | None) -> None:
    if data is None or process.stdin is None:
        return
    try:
        process.stdin.write(data.encode())
        await process.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):  # the command did not read it all
        pass
    finally:
        process.stdin.close()


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


async def terminal(inputs: TerminalInput) -> TerminalOutput:
    argv = _argv(inputs)
    env = {**os.environ, **inputs.env} if inputs.env else None
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE
            if inputs.stdin is not None
            else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=inputs.cwd or None,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        where = f" in {inputs.cwd!r}" if inputs.cwd else ""
        raise TerminalError(
            f"cannot start {argv[0]!r}{where}: {exc.strerror or exc}", reason="start"
        ) from None
    assert process.stdout is not None and process.stderr is not None  # both piped
    stdout, stderr = _Capture(inputs.max_output_bytes), _Capture(inputs.max_output_bytes)
    readers = asyncio.gather(stdout.read(process.stdout), stderr.read(process.stderr))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(
                asyncio.gather(_feed(process, inputs.stdin), process.wait()), inputs.timeout
            )
        except (asyncio.TimeoutError, TimeoutError):
            timed_out = True
            _kill(process)
            await process.wait()
        try:
            await asyncio.wait_for(asyncio.shield(readers), _DRAIN_SECONDS)
        except (asyncio.TimeoutError, TimeoutError):
            pass  # a process outside the command's session holds the pipes: keep what came
    finally:
        if process.returncode is None:  # the call was cancelled
            _kill(process)
            await process.wait()
        readers.cancel()
    assert process.returncode is not None
    return TerminalOutput(
        stdout.text(),
        stderr.text(),
        process.returncode,
        timed_out,
        stdout.truncated or stderr.truncated,
    )
