"""Running one command: a subprocess in a session of its own, its output read as it comes
and cut at the limit, never buffered whole; when the call ends (the command exits, times
out or the call is cancelled) everything it started is killed (`ferrule_terminal.tree`),
and every wait after a kill is bounded."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shlex
import shutil
import signal
from typing import TYPE_CHECKING, Any

from ferrule_kernel import InvalidInputError
from ferrule_kit.network.hostpolicy import narrowed

from .errors import TerminalError
from .plugin import ALLOW_VARIABLE, DISABLE_VARIABLE, TerminalOutput
from .tree import MARKER_VARIABLE, end_call, launcher_argv

if TYPE_CHECKING:
    from .plugin import TerminalInput

#: How long the pipes may stay open once everything the command started was killed.
_DRAIN_SECONDS = 2.0
#: How long a killed command may take to be reaped before the call returns without it.
_REAP_SECONDS = 2.0
_SHELL_OPERATORS = frozenset("();<>|&")


def allowed_programs(listed: list[str] | None) -> list[str] | None:
    """The allow-list in force (None: none): ``$FERRULE_TERMINAL_ALLOW``, narrowed by the
    call's ``listed`` programs, which may leave some out but never add one
    (`HostPolicyError` at ``$.allow[i]``)."""
    setting = os.environ.get(ALLOW_VARIABLE, "").strip()
    host = re.split(r"[,\s]+", setting) if setting else None
    return narrowed(host, listed, field="allow", what="the programs")


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
        argv = allowed_argv(inputs.command, programs)
        search = inputs.env.get("PATH", os.environ.get("PATH"))
        if "/" not in argv[0] and shutil.which(argv[0], path=search) is None:
            raise TerminalError(f"cannot start {argv[0]!r}: no such program", reason="start")
        return argv
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


async def _end(process: asyncio.subprocess.Process, call_id: str) -> int:
    """Kill everything the call started, then the command's exit status, waited for
    `_REAP_SECONDS` at most (a process stuck in the kernel cannot hold the call)."""
    await end_call(process.pid, call_id, running=process.returncode is None)
    with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
        await asyncio.wait_for(process.wait(), _REAP_SECONDS)
    return process.returncode if process.returncode is not None else -signal.SIGKILL


async def _pipe_reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    """A reader of the read end ``fd`` of a pipe the command writes to."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    return reader, transport


async def terminal(inputs: TerminalInput) -> TerminalOutput:
    argv = _argv(inputs)
    call_id = secrets.token_hex(8)
    # The marker comes last: the command's own env cannot hide the call's processes.
    env = {**os.environ, **inputs.env, MARKER_VARIABLE: call_id}
    # The output pipes are this call's own, not the subprocess transport's: so the
    # command's exit is seen when it exits, not when the last holder of a pipe closes it.
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *launcher_argv(argv),
            stdin=asyncio.subprocess.PIPE
            if inputs.stdin is not None
            else asyncio.subprocess.DEVNULL,
            stdout=out_write,
            stderr=err_write,
            cwd=inputs.cwd or None,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        os.close(out_read)
        os.close(err_read)
        where = f" in {inputs.cwd!r}" if inputs.cwd else ""
        raise TerminalError(
            f"cannot start {argv[0]!r}{where}: {exc.strerror or exc}", reason="start"
        ) from None
    finally:
        os.close(out_write)
        os.close(err_write)
    stdout, stderr = _Capture(inputs.max_output_bytes), _Capture(inputs.max_output_bytes)
    unread = [out_read, err_read]  # read ends no reader owns yet
    pipes: list[asyncio.BaseTransport] = []
    readers: asyncio.Future[Any] | None = None
    timed_out = False
    # From here on, whatever happens (a timeout, the call cancelled at any await), the
    # command and everything it started end with the call.
    try:
        streams = []
        while unread:
            stream, pipe = await _pipe_reader(unread[0])
            unread.pop(0)
            streams.append(stream)
            pipes.append(pipe)
        readers = asyncio.gather(stdout.read(streams[0]), stderr.read(streams[1]))
        try:
            await asyncio.wait_for(
                asyncio.gather(_feed(process, inputs.stdin), process.wait()), inputs.timeout
            )
        except (asyncio.TimeoutError, TimeoutError):
            timed_out = True
        returncode = await asyncio.shield(_end(process, call_id))
        try:
            await asyncio.wait_for(asyncio.shield(readers), _DRAIN_SECONDS)
        except (asyncio.TimeoutError, TimeoutError):
            pass  # a process that left the call's reach holds the pipes: keep what came
    finally:
        if process.returncode is None:  # the call was cancelled before the end above
            # shielded: a second cancellation does not stop the killing half way
            await asyncio.shield(_end(process, call_id))
        if readers is not None:
            readers.cancel()
        for pipe in pipes:
            pipe.close()
        for fd in unread:
            os.close(fd)
    return TerminalOutput(
        stdout.text(),
        stderr.text(),
        returncode,
        timed_out,
        stdout.truncated or stderr.truncated,
    )
