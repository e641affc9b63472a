"""Shared fixtures of the Agno compatibility programs.

Each program is a file under ``programs/``, written in the style of Agno's cookbook with
``ferrule`` in place of ``agno`` (``from ferrule.agent import Agent``, ``from
ferrule.models.openai import OpenAIChat``...). A test scripts the model's replies on the
`wire` fixture, runs the program in this interpreter with `run_program` (``runpy``: no
fresh interpreter per program) and checks its outcome: the requests the wire recorded,
the program's globals, what it printed.

`wire` is one loopback server speaking every provider's wire (OpenAI's Chat Completions,
Anthropic's Messages, Gemini's ``streamGenerateContent``, xAI's), found by each provider's
plugin through the provider's usual environment variables, with a test key set for each:
the programs name no URL, as Agno's cookbook names none.
"""

from __future__ import annotations

import json
import runpy
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.content.parts import ANTHROPIC, GEMINI, OPENAI
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer, RecordedRequest, Reply

PROGRAMS = Path(__file__).parent / "programs"

#: The key each provider's plugin is given (the programs read theirs from the environment).
TEST_KEY = "sk-agno-compat-0123456789"


def dialect_of(request: RecordedRequest) -> str:
    """The wire dialect a request speaks, from its path."""
    if request.path.endswith("/messages"):
        return ANTHROPIC
    if ":streamGenerateContent" in request.path or ":generateContent" in request.path:
        return GEMINI
    return OPENAI


class Wire:
    """The loopback server and a scripting language for the model's replies, answered in
    whichever dialect each request speaks."""

    def __init__(self, server: LoopbackServer) -> None:
        self.server = server

    def says(self, *texts: str) -> None:
        """The next replies: each one text."""
        for text in texts:
            self.server.script(lambda request, text=text: reply(dialect_of(request), text))

    def calls(self, name: str, **arguments: Any) -> None:
        """The next reply: a call of tool ``name`` with ``arguments``."""
        self.calls_many((name, arguments))

    def calls_many(self, *calls: tuple[str, dict[str, Any]]) -> None:
        """The next reply: calls of several tools at once."""
        tool_calls = tuple(
            ToolCall(f"call_{uuid.uuid4().hex[:8]}", name, arguments) for name, arguments in calls
        )
        self.server.script(lambda request: reply(dialect_of(request), tool_calls=tool_calls))

    def replies(self, *replies: Reply) -> None:
        self.server.script(*replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        """The model requests (the ones with a JSON body) in order."""
        return [r for r in self.server.requests if r.method == "POST"]

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests]

    @property
    def last(self) -> dict[str, Any]:
        body: dict[str, Any] = self.requests[-1].json
        return body

    def text_sent(self, index: int = -1) -> str:
        """Every text of request ``index`` (system, messages, tool results) as one string,
        to check what the model was shown."""
        return json.dumps(self.requests[index].json)


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[Wire]:
    """One loopback server for every provider (see the module docstring); at the end, no
    scripted reply is left unused and no request was malformed."""
    with LoopbackServer() as server:
        for variable, suffix in (
            ("OPENAI_BASE_URL", "/v1"),
            ("ANTHROPIC_BASE_URL", ""),
            ("GOOGLE_GEMINI_BASE_URL", ""),
            ("XAI_BASE_URL", "/v1"),
        ):
            monkeypatch.setenv(variable, server.url + suffix)
        for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"):
            monkeypatch.setenv(variable, TEST_KEY)
        monkeypatch.delenv("GEMINI_BASE_URL", raising=False)
        yield Wire(server)
        server.check()
        assert server.pending == 0, f"{server.pending} scripted replies were never asked for"


def run_program(name: str) -> dict[str, Any]:
    """Run ``programs/<name>.py`` as a script (``__name__ == "__main__"``) in this
    interpreter; its globals when it ends."""
    path = PROGRAMS / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no Agno compat program {name!r} at {path}")
    return runpy.run_path(str(path), run_name="__main__")


@pytest.fixture
def program() -> Any:
    """`run_program`, as a fixture for the tests of each feature group."""
    return run_program
