"""The official Node clients, ``openai`` and ``@anthropic-ai/sdk`` (versions pinned in
node/package.json), against `ferrule serve`: each ``node/*.test.mjs`` runs under
``node --test``. The packages are installed by this test, with npm, into a cache folder
(``$XDG_CACHE_HOME`` or ``~/.cache``, then ``ferrule-tests/node-clients/<hash of
package.json>``), reused while package.json is unchanged. Node.js 20+ and npm are
required, as for tests/test_node_client.py: without them this test fails, saying so."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from client_server import Served

pytestmark = pytest.mark.timeout(600)

SCRIPTS = Path(__file__).resolve().parent / "node"


@pytest.fixture(scope="session")
def node_folder() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail(
            "the Node clients' tests need Node.js 20+ and npm on PATH (e.g. `apt-get install "
            "nodejs npm`); they are part of the suite, not optional"
        )
    manifest = (SCRIPTS / "package.json").read_bytes()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = cache / "ferrule-tests" / "node-clients" / hashlib.sha256(manifest).hexdigest()[:16]
    if not (folder / "node_modules" / ".installed").exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_bytes(manifest)
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-package-lock"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"npm install in {folder} failed:\n{(done.stdout + done.stderr)[-4000:]}")
        (folder / "node_modules" / ".installed").touch()
    for script in SCRIPTS.glob("*.test.mjs"):  # beside node_modules, where imports resolve
        shutil.copyfile(script, folder / script.name)
    return folder


@pytest.mark.parametrize("script", ["openai.test.mjs", "anthropic.test.mjs"])
def test_node_client(node_folder: Path, served: Served, script: str) -> None:
    env = {**os.environ, "FERRULE_URL": served.url, "FERRULE_KEY": served.api_key}
    done = subprocess.run(
        ["node", "--test", "--test-reporter=spec", script],
        cwd=node_folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-8000:]
