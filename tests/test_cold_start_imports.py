"""With every plugin of the repository installed, discovery, a first call and ``stop()``
import none of the heavy pieces: they load when the request that needs them comes."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = [
    "ferrule_kit.models.lm",
    "ferrule_kit.content.messages",
    "ferrule_kit.embeddings.embedding",
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
import attrs, pluggy  # the floor: what any design keeping them at its core imports
floor = set(sys.modules)
import ferrule
imported = sorted(set(sys.modules) - floor)
rt = ferrule.Runtime()
rt.call("echo", {"text": "x"})
plugin_modules = sorted(m for m in sys.modules if m.endswith(".plugin"))
plugins = {p["name"]: p["error"] for p in rt.kernel.plugins()}
rt.stop()  # a runtime whose loop never started stops without one (nor asyncio)
heavy = json.loads(sys.argv[1])
print(json.dumps({
    "loaded": [m for m in heavy if m in sys.modules],
    "imported": imported,
    "plugin_modules": plugin_modules,
    "plugins": plugins,
}))
"""

#: What ``import ferrule`` may import beyond attrs and pluggy: the Runtime and the kernel
#: (each first line of a cold start's cost; a new module here is a choice, not an accident).
IMPORT_FERRULE = {
    "ferrule",
    "ferrule._bridge",
    "ferrule._transport",
    "ferrule.runtime",
    "contextvars",
    "_contextvars",
    "math",
    "zlib",
}


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
        beyond = [
            m
            for m in report["imported"]
            if m not in IMPORT_FERRULE and not m.startswith("ferrule_kernel")
        ]
        assert beyond == [], f"import ferrule now imports {beyond}"
    assert {"echo", "llamacpp", "openai", "testmodel"} <= set(report["plugins"])
    assert all(error is None for error in report["plugins"].values()), report["plugins"]
    # warm: the first call imported the plugin that serves it, not every plugin's module
    # (the kernel's provider index; listing the plugins then loaded them all)
    assert report["plugin_modules"] == ["ferrule_echo.plugin"], report["plugin_modules"]
