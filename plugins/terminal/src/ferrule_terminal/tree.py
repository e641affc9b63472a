"""Everything a command started, and ending it all: what a call of `terminal` leaves behind
dies with the call, at its end, its timeout or its cancellation.

A process group is not enough: a command can start a process in a session of its own
(``setsid``), which a kill of the group misses, and that process keeps the output pipes
open. So, on Linux:

- the command is started through a small launcher (`launcher_argv`) that makes it a child
  subreaper (``PR_SET_CHILD_SUBREAPER``) before it ``exec``s: a process the command starts
  stays in its tree when its parent exits (``( setsid sleep 600 & )``), instead of being
  adopted by init;
- every process of the call carries a marker variable of its own in its environment
  (`MARKER_VARIABLE`), read back from ``/proc/PID/environ``: it finds what left the tree
  once the command itself has ended;
- `end_call` stops the command (so it adopts what is orphaned and starts nothing more),
  then kills what is below it and what carries the marker, until none is left, then the
  group and the command.

Elsewhere the process group alone is killed. A process that clears its environment and
leaves the tree (``env -i`` once the command has exited) is not found: this bounds an
agent's commands, not a determined attacker's (run those in a container).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

#: The variable each process of a call carries: ``FERRULE_TERMINAL_CALL=<the call's id>``.
MARKER_VARIABLE = "FERRULE_TERMINAL_CALL"
#: How many times the tree is searched again for what was started while it was killed.
_ROUNDS = 50
_LINUX = sys.platform.startswith("linux")
# PR_SET_CHILD_SUBREAPER (linux/prctl.h); the setting survives execve. -I -S: no site, no
# PYTHON* variable of the command's environment reaches the launcher.
_LAUNCHER = (
    "import os,sys\n"
    "try:\n"
    " import ctypes;ctypes.CDLL(None).prctl(36,1,0,0,0)\n"
    "except Exception:pass\n"
    "try:\n"
    " os.execvp(sys.argv[1],sys.argv[1:])\n"
    "except OSError as e:\n"
    " sys.stderr.write(f'{sys.argv[1]}: {e.strerror}\\n');os._exit(127)"
)


def launcher_argv(argv: list[str]) -> list[str]:
    """``argv`` as started: through the subreaper launcher on Linux, as it is elsewhere."""
    if not _LINUX:
        return argv
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, *argv]


def _processes() -> dict[int, tuple[int, str]]:
    """Every process's parent and state (``R``, ``S``, ``Z``...), from ``/proc``."""
    found: dict[int, tuple[int, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                # pid (comm) state ppid ...: comm may hold spaces and parentheses
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        found[int(name)] = (int(fields[1]), fields[0].decode())
    return found


def _marked(marker: bytes, among: dict[int, tuple[int, str]]) -> set[int]:
    own = os.getpid()
    found = set()
    for pid, (_, state) in among.items():
        if pid == own or state == "Z":
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                variables = environ.read().split(b"\0")
        except OSError:  # ended, or another user's
            continue
        if marker in variables:
            found.add(pid)
    return found


def _below(root: int, among: dict[int, tuple[int, str]]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in among.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return {pid for pid in found if among[pid][1] != "Z"}


def _signal(pid: int, number: int, group: bool = False) -> None:
    try:
        (os.killpg if group else os.kill)(pid, number)
    except (ProcessLookupError, PermissionError):
        pass


async def end_call(pid: int, call_id: str, *, running: bool) -> None:
    """Kill everything the call started: the command ``pid`` (a session leader) when it is
    still ``running``, what is below it, what carries the call's marker, and its group.
    (A command that has ended and been reaped is not signalled: its number may be another
    process's by now.)"""
    if not _LINUX:
        _signal(pid, signal.SIGKILL, group=True)
        if running:
            _signal(pid, signal.SIGKILL)
        return
    if running:
        _signal(pid, signal.SIGSTOP)  # it starts nothing more, and adopts what is orphaned
    marker = f"{MARKER_VARIABLE}={call_id}".encode()
    for _ in range(_ROUNDS):
        processes = _processes()
        left = _marked(marker, processes) | (_below(pid, processes) if running else set())
        left.discard(pid)
        if not left:
            break
        for victim in left:
            _signal(victim, signal.SIGKILL)
        await asyncio.sleep(0.005)  # let them die before looking again
    _signal(pid, signal.SIGKILL, group=True)
    if running:
        _signal(pid, signal.SIGKILL)
