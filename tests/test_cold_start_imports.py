"""With every plugin of the repository installed, discovery, a first call and ``stop()``
import none of the heavy pieces: they load when the request that needs them comes."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = [
    "ferrule_kit.lm",
    "ferrule_kit.messages",
    "ferrule_kit.embedding",
    "ferrule.agent",
    "aiohttp",
    "llama_cpp",
    "huggingface_hub",
    "torch",
    "exllamav2",
    "jinja2",
    "rich",
    "structlog",
    "asyncio",
    "opentelemetry",
    "cattrs",
    "gradio",  # the web chat's (ferrule chat --web)
]

CODE = """
import json, sys
import ferrule
rt = ferrule.Runtime()
rt.call("echo", {"text": "x"})
plugins = {p["name"]: p["error"] for p in rt.kernel.plugins()}
rt.stop()  # a runtime whose loop never started stops without one (nor asyncio)
heavy = json.loads(sys.argv[1])
print(json.dumps({"loaded": [m for m in heavy if m in sys.modules], "plugins": plugins}))
"""


def test_discovery_a_first_call_and_stop_import_nothing_heavy(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": ""}
    for _ in range(2):  # the second run starts with a warm discovery cache
        done = subprocess.run(
            [sys.executable, "-c", CODE, json.dumps(HEAVY)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["loaded"] == [], report["loaded"]
    assert {"echo", "llamacpp", "openai", "testmodel"} <= set(report["plugins"])
    assert all(error is None for error in report["plugins"].values()), report["plugins"]
