"""``ferrule chat`` driven through a pseudo-terminal, on the test model (ferrule-testmodel)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import sys
import time

import pytest

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """A child process on a pseudo-terminal (its controlling terminal, so Ctrl-C is SIGINT)."""

    def __init__(
        self, *args: str, pythonpath: str | None = None, env: dict[str, str] | None = None
    ) -> None:
        env = {
            **os.environ,
            "TERM": "xterm-256color",
            "COLUMNS": "120",
            "LINES": "40",
            **(env or {}),
        }
        if pythonpath is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
        env.pop("NO_COLOR", None)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child
            # A Ctrl-C on a terminal is SIGINT: a suite started by nohup or as a script's
            # background job has it ignored, which exec would pass on to the chat.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execvpe(sys.executable, [sys.executable, "-m", "ferrule.cli", "chat", *args], env)
        self.raw = ""

    def read_until(self, pattern: str, timeout: float = 30) -> str:
        """Read until ``pattern`` (a regex) appears in the output since the last match."""
        deadline = time.monotonic() + timeout
        while True:
            match = re.search(pattern, ANSI.sub("", self.raw), re.DOTALL)
            if match:
                seen = self.raw
                self.raw = ANSI.sub("", self.raw)[match.end() :]
                return seen
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"{pattern!r} did not appear; output: {ANSI.sub('', self.raw)!r}"
                )
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(
                        f"the chat exited before {pattern!r}: {ANSI.sub('', self.raw)!r}"
                    )
                self.raw += chunk.decode("utf-8", errors="replace")

    def send(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def wait(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:  # drain, or the child may block writing
                if select.select([self.fd], [], [], 0.05)[0]:
                    os.read(self.fd, 4096)
            except OSError:
                pass
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        raise AssertionError("the chat did not exit")

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


@pytest.fixture
def terminal():
    opened = []

    def open_terminal(*args: str, **options: object) -> Terminal:
        opened.append(Terminal(*args, **options))  # type: ignore[arg-type]
        return opened[-1]

    yield open_terminal
    for term in opened:
        term.close()


def test_interactive_chat_keeps_history_clears_and_exits(terminal, tmp_path):
    # a test-model function that tells how many messages the model was sent
    (tmp_path / "count_messages.py").write_text(
        "def reply(inputs):\n"
        "    return f'{len(inputs.messages)} messages, last: {inputs.messages[-1].text}'\n"
    )
    chat = terminal("-m", "test", "-o", "function=count_messages:reply", pythonpath=str(tmp_path))
    chat.read_until(r"you> ")
    chat.send("hello pty world\r")
    chat.read_until(r"\r\n1 messages, last: hello pty world\s*\r?\n.*you> ")
    chat.send("second question\r")
    chat.read_until(r"3 messages, last: second question\s*\r?\n.*you> ")
    chat.send("/clear\r")
    chat.read_until(r"\(conversation cleared\).*you> ")
    chat.send("third\r")
    chat.read_until(r"1 messages, last: third")
    chat.send("/exit\r")
    assert chat.wait() == 0


def test_ctrl_c_stops_a_streaming_reply_and_the_chat_goes_on(terminal):
    chat = terminal("-m", "test", "-o", "delay=0.2")
    chat.read_until(r"you> ")
    chat.send(" ".join(f"w{i}" for i in range(200)) + "\r")
    chat.read_until(r"w199\r\n")  # the terminal's echo of the line
    chat.read_until(r"w3 ")  # the reply is streaming
    chat.send("\x03")  # Ctrl-C
    chat.read_until(r"\(stopped\).*you> ")
    assert "w199" not in chat.raw
    chat.send("still here\r")
    chat.read_until(r"still here")
    chat.read_until(r"you> ")  # readline reads Ctrl-D at the prompt, not typed ahead
    chat.send("\x04")  # Ctrl-D at the prompt
    assert chat.wait() == 0


def test_reasoning_and_tool_calls_are_shown_distinctly(terminal):
    turns = [
        {
            "reasoning": "six times seven",
            "tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}],
        },
        {"text": "It is 42."},
    ]
    chat = terminal(
        "-m",
        "test",
        "--reasoning",
        "--tool",
        "calculator",
        "-o",
        "turns=" + json.dumps(turns),
        "6*7?",
    )
    raw = chat.read_until(r"It is 42\.")
    assert "\x1b[2;3msix \x1b[0m\x1b[2;3mtimes " in raw, "reasoning is dim and italic"
    plain = ANSI.sub("", raw)
    assert '⚙ calculator({"expression": "6*7"})' in plain
    assert '↳ {"value": 42}' in plain
    assert chat.wait() == 0


def test_one_shot_error_exits_non_zero(terminal):
    chat = terminal(
        "-m", "test", "-o", 'turns=[{"text": "partial", "error": "backend down"}]', "hi"
    )
    chat.read_until(r"partial\s*\r?\n.*error: backend down")
    assert chat.wait() == 1
    chat = terminal("-m", "no-such-model-anywhere", "hi")
    chat.read_until(r"unknown_model")
    assert chat.wait() == 1


def test_the_chat_recalls_earlier_questions_with_readline(terminal, tmp_path):
    """Lines typed in one chat are kept in $XDG_STATE_HOME/ferrule/chat_history and come
    back with the up arrow in the next one."""
    env = {"XDG_STATE_HOME": str(tmp_path)}
    first = terminal("-m", "test", env=env)
    first.read_until(r"you> ")
    first.send("what was the question\r")
    first.read_until(r"what was the question.*you> ")
    first.send("/exit\r")
    assert first.wait() == 0
    history = tmp_path / "ferrule" / "chat_history"
    assert "what was the question" in history.read_text()

    second = terminal("-m", "test", env=env)
    second.read_until(r"you> ")
    second.send("\x1b[A\x1b[A\r")  # up twice (past /exit), then Enter
    second.read_until(r"what was the question\r\n")  # recalled and sent
    second.read_until(r"what was the question.*you> ")  # answered
    second.send("\x04")
    assert second.wait() == 0


def test_an_interactive_chat_resumes_its_stored_session(terminal, tmp_path):
    (tmp_path / "count_messages.py").write_text(
        "def reply(inputs):\n"
        "    return f'{len(inputs.messages)} messages, last: {inputs.messages[-1].text}'\n"
    )
    options = ("-m", "test", "-o", "function=count_messages:reply")
    session = ("--session", "work", "--db", str(tmp_path / "chats.db"))
    chat = terminal(*options, *session, pythonpath=str(tmp_path))
    chat.read_until(r"\(new session work\).*you> ")
    chat.send("hello\r")
    chat.read_until(r"1 messages, last: hello\s*\r?\n.*you> ")
    chat.send("/exit\r")
    assert chat.wait() == 0
    chat = terminal(*options, *session, pythonpath=str(tmp_path))
    chat.read_until(r"\(resuming session work \(1 runs\)\).*you> ")
    chat.send("again\r")
    chat.read_until(r"3 messages, last: again\s*\r?\n.*you> ")
    chat.send("/clear\r")
    chat.read_until(r"a stored session keeps its history.*you> ")
    chat.send("/exit\r")
    assert chat.wait() == 0
