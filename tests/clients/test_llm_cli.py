"""The ``llm`` CLI against `ferrule serve`, configured as its docs say for an
OpenAI-compatible server: ``extra-openai-models.yaml`` in its user directory (an
``api_base``, the key under ``api_key_name`` in its ``keys.json``), one model over Chat
Completions and one over the Responses API (``responses: true``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from client_server import TOKEN, Served, serving

pytestmark = pytest.mark.timeout(120)

TOOL = 'def get_weather(city: str) -> str:\n    return f"3 degrees in {city}"\n'


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """Each run of the CLI takes seconds, so the cases run once, with a token;
    `test_without_a_token` runs against a server without one."""
    with serving(TOKEN) as server:
        yield server


def configure(served: Served, home: Path):
    """The ``llm`` CLI set up in ``home`` for ``served``: a function that runs it."""
    models = []
    for model_id, name, extra in (
        ("ferrule-test", "test", "  reasoning: true\n"),
        ("ferrule-tools", "tool-bot", ""),
        ("ferrule-responses", "test", "  responses: true\n"),
    ):
        models.append(
            f"- model_id: {model_id}\n  model_name: {name}\n  api_base: {served.openai_base}\n"
            f"  api_key_name: ferrule\n  supports_tools: true\n  supports_schema: true\n{extra}"
        )
    (home / "extra-openai-models.yaml").write_text("".join(models))
    (home / "keys.json").write_text(json.dumps({"ferrule": served.api_key}))
    executable = shutil.which("llm", path=str(Path(sys.executable).parent))
    assert executable is not None, "the llm CLI is installed beside this Python"
    env = {**os.environ, "LLM_USER_PATH": str(home)}
    env.pop("OPENAI_API_KEY", None)

    def run(*args: str) -> str:
        done = subprocess.run(
            [executable, *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    return run


@pytest.fixture(scope="module")
def llm(served: Served, tmp_path_factory: pytest.TempPathFactory):
    return configure(served, tmp_path_factory.mktemp("llm"))


def test_without_a_token(tmp_path):
    with serving(None) as open_server:
        run = configure(open_server, tmp_path)
        assert run("-m", "ferrule-test", "Hello there") == "Hello there"
        answer = run("-m", "ferrule-tools", "--functions", TOOL, "Oslo")
        assert answer == "The tool said: 3 degrees in Oslo"


def test_chat(llm):
    assert llm("-m", "ferrule-test", "--no-stream", "Hello there") == "Hello there"


def test_streaming(llm):
    assert llm("-m", "ferrule-test", "Hello there") == "Hello there"


def test_multi_turn_with_reasoning(llm):
    assert llm("-m", "ferrule-test", "-o", "reasoning_effort", "low", "first question")
    assert llm("-c", "-o", "reasoning_effort", "low", "second question") == "second question"
    logged = json.loads(llm("logs", "--json", "-n", "1"))
    assert logged[0]["conversation_id"] and logged[0]["prompt"] == "second question"


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "plain"])
def test_tools_round_trip(llm, stream):
    options = [] if stream else ["--no-stream"]
    answer = llm("-m", "ferrule-tools", *options, "--functions", TOOL, "Oslo")
    assert answer == "The tool said: 3 degrees in Oslo"


def test_structured_output(llm):
    reply = llm("-m", "ferrule-test", "--schema", "name, population int", "Oslo")
    assert json.loads(reply) == {"name": "Oslo", "population": 0}


def test_responses_api(llm):
    assert llm("-m", "ferrule-responses", "Hello there") == "Hello there"
