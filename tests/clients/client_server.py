"""The `ferrule serve` process the client tests run against (see conftest.py)."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
TOKEN = "client-tests-token-0123456789abcdef"
EMBEDDER = "all-MiniLM-L6-v2"


@attrs.frozen
class Served:
    """A running server: its URL (``http://127.0.0.1:<port>``), the token it requires
    (None: none) and the API key a client sends."""

    url: str
    token: str | None

    @property
    def api_key(self) -> str:
        return self.token or "no-token-needed"

    @property
    def openai_base(self) -> str:
        return f"{self.url}/v1"


def start_server(token: str | None) -> tuple[subprocess.Popen[str], str]:
    command = [
        sys.executable, "-m", "ferrule", "serve", "--port", "0",
        "--plugin", "serve_models:plugin", "--model", "test", "--model", "tool-bot",
    ]  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("FERRULE_TOKEN", None)
    if token:
        command += ["--token", token]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    seen = []
    for line in process.stdout:  # the first lines: what it loaded, then where it listens
        seen.append(line)
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            # its later output (the access log) read on, so a full pipe never blocks it
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, found.group(1)
    process.wait(timeout=30)
    raise RuntimeError("ferrule serve did not start:\n" + "".join(seen))


@contextlib.contextmanager
def serving(token: str | None) -> Iterator[Served]:
    """A `ferrule serve` process for the block (``token``: None for none)."""
    process, url = start_server(token)
    try:
        yield Served(url, token)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
