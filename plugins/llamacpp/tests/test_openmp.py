"""How llama.cpp's threads wait: GNU OpenMP gets a middle spin when the library loads, unless
the environment says otherwise, and nothing of it is left in the environment after.
Each case runs in a fresh interpreter (the library loads once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SCRIPT = """
import json, os, sys
from pathlib import Path
from ferrule import Runtime

def openmp_mapped():
    return "libgomp" in Path("/proc/self/maps").read_text()

before = openmp_mapped()
seen = {}
if sys.argv[1] == "preloaded":
    import llama_cpp  # loaded before any component: its environment was the process's

from ferrule_llamacpp import openmp
with openmp.prepared():
    seen = {k: os.environ.get(k) for k in openmp.SETTINGS}
    import llama_cpp
with Runtime() as rt:  # a component loads the model as the backend does
    rt.define("llamacpp_language_model", "lm", {"parallel": 1, "n_ctx": 256})
    rt.call_method("lm", "count_tokens", {"messages": [{"role": "user", "content": "hi"}]})
print(json.dumps({
    "before": before,
    "loaded": openmp_mapped(),
    "inside": seen,
    "after": {k: os.environ.get(k) for k in openmp.SETTINGS},
}))
"""


def run(case: str, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), case],
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, "HF_HUB_OFFLINE": "1", **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_middle_spin_while_the_library_loads_and_none_after(smollm2_gguf: object) -> None:
    out = run("fresh")
    assert not out["before"] and out["loaded"]
    assert out["inside"] == {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": "20000"}
    assert out["after"] == {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None}


def test_the_environment_says_how_to_wait(smollm2_gguf: object) -> None:
    for setting in ({"OMP_WAIT_POLICY": "active"}, {"GOMP_SPINCOUNT": "300000"}):
        out = run("fresh", **setting)
        expected = {name: setting.get(name) for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
        assert out["inside"] == out["after"] == expected


def test_a_library_already_loaded_is_left_as_it_is(smollm2_gguf: object) -> None:
    out = run("preloaded")
    assert out["inside"] == out["after"] == {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None}
