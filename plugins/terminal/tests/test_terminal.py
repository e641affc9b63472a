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
