"""`ChromaServer`: a throwaway Chroma server on a loopback port, for tests (this plugin's,
and any that need a real Chroma: ``with ChromaServer() as server: ... server.url``).

It runs ``chroma run`` (the server the ``chromadb`` distribution ships) in a child process
on a fresh data folder, waits for its heartbeat, and stops it on exit.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from types import TracebackType
from typing import IO

__all__ = ["ChromaServer"]

#: Seconds to wait for the server's first heartbeat.
STARTUP_TIMEOUT = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ChromaServer:
    """A Chroma server on ``127.0.0.1``: ``url`` once started (``with`` or `start`), on
    ``port`` (default: a free one; a fixed one for programs that expect Chroma at a known
    address, as Ailoy's tests expect localhost:8000)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, port: int | None = None) -> None:
        self._given = Path(path) if path is not None else None
        self._port = port
        self._folder: str | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.port = 0
        self.url = ""

    def start(self) -> ChromaServer:
        if self._given is None:
            self._folder = tempfile.mkdtemp(prefix="ferrule-chroma-")
        data = self._given or Path(self._folder or "")
        self.port = self._port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        data.mkdir(parents=True, exist_ok=True)
        self._log = open(data / "chroma.log", "wb")
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from chromadb.cli.cli import app; app()",
                "run",
                "--path",
                str(data / "data"),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self._process.poll() is not None:
                self.stop()
                raise RuntimeError(f"chroma run exited with {self._process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1):
                    return self
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"Chroma did not answer at {self.url}") from None
                time.sleep(0.1)

    def new_database(self, tenant: str = "default_tenant") -> str:
        """Create a database of its own on the server (a test's empty namespace) and return
        its name."""
        import chromadb
        from chromadb.config import Settings

        name = f"test_{uuid.uuid4().hex[:12]}"
        admin = chromadb.AdminClient(
            Settings(
                chroma_api_impl="chromadb.api.fastapi.FastAPI",
                chroma_server_host="127.0.0.1",
                chroma_server_http_port=self.port,
                anonymized_telemetry=False,
            )
        )
        admin.create_database(name, tenant)
        return name

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log, self._log = self._log, None
        if log is not None:
            log.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
