"""The terminal operator through a Runtime, on real subprocesses (bash or /bin/sh)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from ferrule import AsyncRuntime
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_terminal import plugin
from ferrule_terminal.errors import TerminalError

pytestmark = pytest.mark.asyncio


@pytest.fixture
async def rt():
    async with AsyncRuntime() as runtime:
        yield runtime


async def test_output_and_exit_code(rt: AsyncRuntime) -> None:
    out = await rt.call("terminal", {"command": "echo out; echo err >&2; exit 3"})
    assert out == {
        "stdout": "out\n",
        "stderr": "err\n",
        "exit_code": 3,
        "timed_out": False,
        "truncated": False,
    }


async def test_cwd_env_and_stdin(rt: AsyncRuntime, tmp_path: Path) -> None:
    (tmp_path / "here.txt").write_text("x")
    out = await rt.call(
        "terminal",
        {
            "command": 'ls; echo "$GREETING"; tr a-z A-Z',
            "cwd": str(tmp_path),
            "env": {"GREETING": "héllo"},
            "stdin": "shout\n",
        },
    )
    assert out["stdout"] == "here.txt\nhéllo\nSHOUT\n"
    assert out["exit_code"] == 0
    # the variable was added for the command only
    assert "GREETING" not in os.environ


async def test_the_default_working_directory_is_this_process(rt: AsyncRuntime) -> None:
    out = await rt.call("terminal", {"command": "pwd"})
    assert Path(out["stdout"].strip()).resolve() == Path.cwd().resolve()


async def test_timeout_kills_the_command_and_its_children(rt: AsyncRuntime, tmp_path: Path) -> None:
    marker = tmp_path / "late"
    # the child would write the marker after the timeout, were it left running
    command = f"echo started; (sleep 2; touch {marker}) & sleep 30"
    out = await rt.call("terminal", {"command": command, "timeout": 0.5})
    assert out["timed_out"] is True
    assert out["exit_code"] == -9
    assert out["stdout"] == "started\n"  # what came before the kill is kept
    import asyncio

    await asyncio.sleep(2.5)
    assert not marker.exists()


async def test_output_is_cut_at_the_limit(rt: AsyncRuntime) -> None:
    command = f"{sys.executable} -c \"print('a' * 100000)\""
    out = await rt.call("terminal", {"command": command, "max_output_bytes": 10})
    assert out["stdout"] == "a" * 10
    assert out["truncated"] is True
    assert out["exit_code"] == 0  # the command was read to its end, not blocked


async def test_allow_list_runs_listed_programs_without_a_shell(rt: AsyncRuntime) -> None:
    out = await rt.call("terminal", {"command": "echo '$HOME *' two", "allow": ["echo"]})
    assert out["stdout"] == "$HOME * two\n"  # no shell expanded them


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("rm -rf /tmp/nothing-here", "'rm' is not in the allow-list"),
        ("echo hi; rm x", "shell operator ';'"),
        ("echo hi | sh", "shell operator '|'"),
        ("echo hi > /tmp/x", "shell operator '>'"),
        ("/bin/echo hi", "'/bin/echo' is not in the allow-list"),
    ],
)
async def test_allow_list_refuses_the_rest(
    rt: AsyncRuntime, monkeypatch: pytest.MonkeyPatch, command: str, words: str
) -> None:
    monkeypatch.setenv(plugin.ALLOW_VARIABLE, "echo, ls")
    with pytest.raises(TerminalError) as error:
        await rt.call("terminal", {"command": command})
    assert words in error.value.message
    assert error.value.details["reason"] == "not_allowed"


async def test_the_off_switch_refuses_every_command(
    rt: AsyncRuntime, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(plugin.DISABLE_VARIABLE, "1")
    with pytest.raises(TerminalError) as error:
        await rt.call("terminal", {"command": f"touch {tmp_path / 'x'}"})
    assert error.value.details["reason"] == "disabled"
    assert not (tmp_path / "x").exists()


async def test_a_network_client_may_not_run_a_command(tmp_path: Path) -> None:
    kernel = Kernel(plugins=[plugin], load_entry_points=False)
    try:
        with pytest.raises(InvalidInputError) as error:
            await kernel.call("terminal", {"command": f"touch {tmp_path / 'x'}"}, trusted=False)
    finally:
        await kernel.aclose()
    assert error.value.errors[0]["path"] == "$.command"
    assert not (tmp_path / "x").exists()


async def test_a_missing_working_directory_is_a_typed_error(
    rt: AsyncRuntime, tmp_path: Path
) -> None:
    with pytest.raises(TerminalError) as error:
        await rt.call("terminal", {"command": "pwd", "cwd": str(tmp_path / "gone")})
    assert error.value.details["reason"] == "start"


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"command": "  "}, "$.command"),
        ({"command": "ls", "timeout": 0}, "$.timeout"),
        ({"command": "ls", "env": {"A=B": "x"}}, "$.env['A=B']"),
        ({"command": "ls", "allow": ["ls -l"]}, "$.allow[0]"),
        ({"command": "ls", "max_output_bytes": 0}, "$.max_output_bytes"),
    ],
)
async def test_bad_input_names_the_field(rt: AsyncRuntime, inputs: dict, field: str) -> None:
    with pytest.raises(InvalidInputError) as error:
        await rt.call("terminal", inputs)
    assert field in str(error.value.errors) or field in error.value.message


# -- host policy wins (issue 31, reproduction 1) -----------------------------------------------


async def test_a_calls_allow_list_narrows_the_hosts_and_never_widens_it(
    rt: AsyncRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ferrule_kit.network.hostpolicy import HostPolicyError

    monkeypatch.setenv(plugin.ALLOW_VARIABLE, "echo")
    with pytest.raises(HostPolicyError) as error:
        await rt.call("terminal", {"command": "id", "allow": ["id"]})
    assert error.value.errors[0]["path"] == "$.allow[0]"
    assert "'id' is not among the programs the host allows (echo)" in error.value.message
    # narrowing is fine: the call's list, within the host's
    monkeypatch.setenv(plugin.ALLOW_VARIABLE, "echo, ls")
    out = await rt.call("terminal", {"command": "echo narrowed", "allow": ["echo"]})
    assert out["stdout"] == "narrowed\n"
    with pytest.raises(TerminalError, match="'ls' is not in the allow-list"):
        await rt.call("terminal", {"command": "ls", "allow": ["echo"]})


async def test_a_listed_program_that_is_not_installed_is_a_start_error(
    rt: AsyncRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(plugin.ALLOW_VARIABLE, "no-such-program-here")
    with pytest.raises(TerminalError) as error:
        await rt.call("terminal", {"command": "no-such-program-here --help"})
    assert error.value.details["reason"] == "start"


# -- nothing a command starts outlives its call (issue 31, reproduction 2) ----------------------


def _running(seconds: str) -> list[str]:
    """The command lines of this machine's ``sleep SECONDS`` processes (the launcher and
    the shell, whose command lines hold the whole command, are not ones)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                words = cmdline.read().split(b"\0")
        except OSError:
            continue
        if words[0].endswith(b"sleep") and words[1:2] == [seconds.encode()]:
            found.append(b" ".join(words).decode())
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    "command",
    [
        # a grandchild in a session of its own, holding the output pipes, orphaned at once
        "( setsid sh -c 'sleep {seconds}' & ) ; sleep 30",
        # the same, its output sent elsewhere: it holds nothing, but must die too
        "setsid sleep {seconds} >/dev/null 2>&1 & sleep 30",
        # two levels down, the middle one gone, in a new session
        "( ( setsid sleep {seconds} & ) & ) ; sleep 30",
    ],
)
async def test_a_timeout_ends_everything_the_command_started(
    rt: AsyncRuntime, command: str
) -> None:
    import asyncio
    import random
    import time

    seconds = f"{random.randint(1000, 9999)}.{random.randint(100, 999)}"  # ours alone
    started = time.monotonic()
    out = await asyncio.wait_for(
        rt.call("terminal", {"command": command.format(seconds=seconds), "timeout": 1}), 20
    )
    assert time.monotonic() - started < 10  # the timeout, the kill, a bounded wait
    assert out["timed_out"] is True
    assert _running(seconds) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_what_a_finished_command_left_running_is_ended_with_its_call(
    rt: AsyncRuntime,
) -> None:
    import random

    seconds = f"{random.randint(1000, 9999)}.{random.randint(100, 999)}"
    out = await rt.call("terminal", {"command": f"( setsid sleep {seconds} & ) ; echo done"})
    assert (out["stdout"], out["exit_code"], out["timed_out"]) == ("done\n", 0, False)
    assert _running(seconds) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("when", ["running", "starting"])
async def test_a_cancelled_call_ends_everything_the_command_started(
    rt: AsyncRuntime, when: str
) -> None:
    import asyncio
    import random

    seconds = f"{random.randint(1000, 9999)}.{random.randint(100, 999)}"
    command = f"( setsid sleep {seconds} & ) ; sleep 30.{random.randint(100, 999)}"
    call = asyncio.ensure_future(rt.call("terminal", {"command": command}))
    for _ in range(200 if when == "running" else 1):  # until the grandchild runs, or at once
        await asyncio.sleep(0.02)
        if _running(seconds):
            break
    call.cancel()
    with pytest.raises(BaseException):  # noqa: B017 (cancelled, however the runtime says it)
        await call
    for _ in range(100):  # a call cancelled while its command starts may start it later
        await asyncio.sleep(0.02)
        if not _running(seconds):
            break
    await asyncio.sleep(0.5)
    assert _running(seconds) == []
    assert _running(command.rsplit(" ", 1)[1]) == []
