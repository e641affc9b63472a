"""The examples of docs/serve.md run by themselves, and the page shows them as they are."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {
    "serve_clients.py": [
        "echo: {'text': 'Hello world'}",
        "delta: 'network' None",
        "delta: '' stop",
        re.compile(r"models: \[.*'test'.*\]"),  # and whatever else is installed
        "reply: Hi from the openai client | usage: 10",
        "stream: ['one ', 'two ', 'three', None]",
        "server stopped",
    ],
    "serve_mount_routes.py": [
        "host route: {'hello': 'from the host app'}",
        "chat: mounted routes",
        "kernel api: {'text': 'through the host app'}",
    ],
    "serve_in_process.py": ["shout: IN PROCESS"],
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for expected in EXAMPLES[name]:
        if isinstance(expected, re.Pattern):
            assert any(expected.fullmatch(line) for line in lines), (expected, result.stdout)
        else:
            assert expected in lines, (expected, result.stdout)


def test_the_page_shows_each_example_as_it_is():
    page = (ROOT / "docs" / "serve.md").read_text()
    shown = dict(re.findall(r"^`examples/([^`]+)`:\n\n```python\n(.*?)^```", page, re.S | re.M))
    assert set(shown) == set(EXAMPLES)
    for name, code in shown.items():
        assert code == (ROOT / "examples" / name).read_text(), name
