"""docs/plugins.md's example plugins, built from the page itself, installed from their own
folders with pip, work with no change to ferrule: the operator is listed and callable, the
content type's parts reach a provider's wire; and a plugin that fails to import is reported
while the others keep working."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


OPERATOR = "A complete operator plugin"
CONTENT_TYPE = "A complete content-type plugin"


def _doc_files(section: str) -> dict[str, str]:
    """The files a section of the guide tells the reader to write: a `path`: line, then a
    code block."""
    text = (ROOT / "docs" / "plugins.md").read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    pattern = re.compile(r"^`([^`]+)`:\n\n```[a-z]*\n(.*?)^```", re.S | re.M)
    return {path: body for path, body in pattern.findall(body)}


def _install(files: dict[str, str], folder: Path, site: Path) -> None:
    """Write ``files`` into ``folder`` and pip-install it into ``site``."""
    for path, body in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(body)
    # --no-build-isolation: build with the hatchling installed here, so nothing is fetched.
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(folder),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr


def _run(args: list[str], site: Path, **kw) -> subprocess.CompletedProcess:
    # COLUMNS: rich would otherwise wrap the plugins table to the terminal's width.
    env = {
        **os.environ,
        "COLUMNS": "250",
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120, **kw)


def _ferrule(site: Path, *args: str) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "ferrule.cli", *args], site)


def test_the_guide_plugin_is_under_40_lines():
    files = _doc_files(OPERATOR)
    assert set(files) == {"pyproject.toml", "ferrule_reverse/__init__.py"}
    assert sum(len(body.strip().splitlines()) for body in files.values()) < 40


def test_plugin_from_the_guide_installs_and_works(tmp_path):
    site = tmp_path / "site"
    _install(_doc_files(OPERATOR), tmp_path / "ferrule-reverse", site)

    called = _ferrule(site, "call", "reverse", '{"text": "Hello world", "words": true}')
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout) == {"text": "world Hello"}

    listed = _ferrule(site, "plugins", "--json")
    plugin = next(p for p in json.loads(listed.stdout) if p["name"] == "reverse")
    assert plugin["distribution"] == "ferrule-reverse"
    assert plugin["version"] == "0.1.0"
    assert plugin["operators"] == ["reverse"]
    assert plugin["error"] is None

    refused = _ferrule(site, "call", "reverse", '{"text": 3}')
    assert refused.returncode == 1
    assert "$.text: expected string, got integer" in refused.stderr


# Run with the plugin installed: a loopback OpenAI-compatible server, the guide's part sent
# to it in a message through the Runtime, and what arrived printed as JSON.
SEND_A_LOCATION = """
import json
from ferrule import LocationPart, Message, Part, Runtime
from ferrule_kit.models.qwen3 import render_prompt
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer

message = Message("user", ["Where is this?", LocationPart(59.91, 10.75)])
assert Part.Location is LocationPart
with LoopbackServer() as server, Runtime() as rt:
    server.script(reply("openai-compatible"))
    rt.define("openai_language_model", "lm", {"model": "m", "base_url": server.url + "/v1"})
    list(rt.call_iter_method("lm", "infer", {"messages": [message.to_dict()]}))
    bad = {"role": "user", "content": [{"type": "location", "location": {"latitude": "north"}}]}
    try:
        list(rt.call_iter_method("lm", "infer", {"messages": [bad]}))
    except Exception as exc:
        refused = exc.errors
print(json.dumps({
    "wire": message.to_dict()["content"][1],
    "sent": server.requests[0].json["messages"][0]["content"],
    "refused": refused,
    "requests": len(server.requests),
    "local": render_prompt([message]),
}))
"""


def test_content_type_plugin_from_the_guide_reaches_a_provider_wire(tmp_path):
    site = tmp_path / "site"
    _install(_doc_files(CONTENT_TYPE), tmp_path / "ferrule-location", site)
    done = _run([sys.executable, "-c", SEND_A_LOCATION], site)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["wire"] == {
        "type": "location",
        "location": {"latitude": 59.91, "longitude": 10.75},
    }
    place = "(a place at latitude 59.91, longitude 10.75)"
    assert report["sent"] == [
        {"type": "text", "text": "Where is this?"},
        {"type": "text", "text": place},
    ]
    assert report["refused"] == [
        {
            "path": "$.messages[0].content[0].location.latitude",
            "message": "expected number, got string",
        }
    ]
    assert report["requests"] == 1  # the refused message never left
    assert f"Where is this?\n\n{place}" in report["local"]


@pytest.fixture
def broken_plugin_site(tmp_path) -> Path:
    """A distribution whose entry-point module raises on import, installed on a path."""
    site = tmp_path / "site"
    dist_info = site / "ferrule_broken-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ferrule-broken\nVersion: 1.0\n"
    )
    (dist_info / "entry_points.txt").write_text("[ferrule]\nbroken = ferrule_broken_mod\n")
    (site / "ferrule_broken_mod.py").write_text(
        "raise ImportError('needs libfoo, which is missing')\n"
    )
    return site


def test_a_plugin_that_fails_to_import_is_reported_and_the_others_work(broken_plugin_site):
    listed = _ferrule(broken_plugin_site, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    broken = next(p for p in json.loads(listed.stdout) if p["name"] == "broken")
    assert broken["distribution"] == "ferrule-broken"
    assert broken["error"] == "import failed: ImportError: needs libfoo, which is missing"

    # Outside a terminal the table is one line per plugin: its status column and the error.
    table = _ferrule(broken_plugin_site, "plugins")
    row = next(line for line in table.stdout.splitlines() if line.startswith("broken "))
    assert row.split()[3] == "broken"
    assert row.endswith("(error: import failed: ImportError: needs libfoo, which is missing)")

    called = _ferrule(broken_plugin_site, "call", "echo", '{"text": "still here"}')
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout) == {"text": "still here"}
