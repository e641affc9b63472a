"""How the cookbook replay (``replay_agno.py`` beside this file) sorts and rewrites Agno's
files: the rules that decide which files count as runnable are checked here, on small
programs written for the purpose."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
import replay_agno  # a tool beside this file, not a package


def test_the_package_name_is_rewritten_where_it_names_the_package() -> None:
    source = (
        "import agno\n"
        "from agno.agent import Agent  # agno's agent\n"
        "print(agno.__name__, 'libs/agno/agno', \"agno\")\n"
    )
    assert replay_agno.as_ferrule(source) == (
        "import ferrule\n"
        "from ferrule.agent import Agent  # agno's agent\n"
        "print(ferrule.__name__, 'libs/agno/agno', \"agno\")\n"
    )


@given(st.text(alphabet="abgnoz_ ./'\"#\n", max_size=60))
def test_rewriting_keeps_every_program_it_can_read_parseable(text: str) -> None:
    try:
        ast.parse(text)
    except SyntaxError:
        return
    ast.parse(replay_agno.as_ferrule(text))


@pytest.mark.parametrize(
    ("source", "status", "says"),
    [
        (
            "from agno.agent import Agent\nAgent(add_culture_to_context=True)",
            "not covered",
            "culture",
        ),
        ("from agno.agent import Agent\nAgent(model='nosuchvendor:m1')", "not covered", "vendor"),
        ("from google import genai\n", "not covered", "google.genai"),
        ("import boto3\n", "internet", "AWS"),
        ("URL = 'http://localhost:3300/v1/memories'\n", "not covered", "localhost:3300"),
    ],
)
def test_files_are_sorted_by_what_they_need(source: str, status: str, says: str) -> None:
    reason = replay_agno.not_run_reason(source)
    assert reason is not None and reason[0] == status and says in reason[1]


@pytest.mark.parametrize(
    "source",
    [
        "from agno.agent import Agent\nAgent(model='openai:gpt-4o')",
        # a dead port names a model that fails (the fallback cookbook), not a server
        "from agno.models.openai import OpenAIChat\nOpenAIChat(base_url='http://localhost:1/v1')",
        "from agno.agent import Agent\nAgent(markdown=True)",
    ],
)
def test_files_in_subject_are_runnable(source: str) -> None:
    assert replay_agno.not_run_reason(source) is None


def test_a_failed_run_that_print_response_shows_is_a_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ferrule.agent import Agent
    from ferrule.models.openai import OpenAIChat

    refused = OpenAIChat(
        id="gpt-4o", base_url="http://127.0.0.1:1/v1", api_key="sk-test-key", max_retries=0
    )
    Agent(model=refused).print_response("hi")
    panel = replay_agno.ERROR_PANEL.search(capsys.readouterr().out)
    assert panel is not None and "connection failed" in panel[1]


@pytest.mark.parametrize(
    ("source", "beside"),
    [
        (
            'from pathlib import Path\nP = Path(__file__).parent.joinpath("sample.jpg")',
            ["sample.jpg"],
        ),
        ('from pathlib import Path\nP = Path(__file__).parent / "notes.md"', ["notes.md"]),
        # a program that makes its folder, or fetches its sample (a comment says nothing)
        (
            'from pathlib import Path\nW = Path(__file__).parent / "ws"\nW.mkdir()',
            [],
        ),
        (
            "from pathlib import Path\n# please download a sample first\n"
            'P = Path(__file__).parent.joinpath("s.mp3")',
            ["s.mp3"],
        ),
    ],
)
def test_files_read_from_beside_the_program_are_found(source: str, beside: list[str]) -> None:
    assert replay_agno.files_beside(source) == beside
