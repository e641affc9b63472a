"""The Node (JavaScript) client, clients/node: its own suite (`node --test`: the runtime,
the agent loop with JavaScript tools, the offline default model, every JavaScript example
of the seeds, and Ailoy's JS test cases in test/compat) against real `ferrule serve`
processes it starts from this environment. Node.js 20+ and npm are required: without them
this test fails, saying so."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[1] / "clients" / "node"

pytestmark = pytest.mark.timeout(1800)


def _run(command: list[str], env: dict[str, str], timeout: float) -> None:
    done = subprocess.run(
        command,
        cwd=CLIENT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-6000:]
        pytest.fail(f"`{' '.join(command)}` in {CLIENT} failed ({done.returncode}):\n{output}")


def test_the_node_client_suite_passes() -> None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail(
            "the Node client's tests need Node.js 20+ and npm on PATH (e.g. `apt-get install "
            "nodejs npm`, or https://nodejs.org); they are part of the suite, not optional"
        )
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    major = int(version.stdout.strip().lstrip("v").split(".")[0])
    if major < 20:
        pytest.fail(f"the Node client needs Node.js 20 or later, found {version.stdout.strip()}")
    # The servers the tests start are this environment's `ferrule`.
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "FERRULE_PYTHON": sys.executable,
    }
    _run([npm, "ci", "--no-audit", "--no-fund"], env, 300)
    _run([npm, "run", "build"], env, 300)
    _run([npm, "test"], env, 1500)
