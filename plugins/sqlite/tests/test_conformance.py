"""The storage contract, checked against ferrule-sqlite on a real file: in this process,
and through `ferrule serve`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from ferrule import Runtime
from ferrule.server import ServerThread
from ferrule_kit.stores.storage import STORAGE_DIR_ENV
from ferrule_kit.testing.storage import StorageConformance, StorageUnderTest


@contextmanager
def served_runtime() -> Iterator[Runtime]:
    with ServerThread() as url, Runtime(url=url) as rt:
        yield rt


#: Where the store runs: in this process, or on a server that a remote runtime defines it
#: on and calls (the server's storage directory is the host's; the client names a file).
RUNTIMES = {"in-process": Runtime, "over-serve": served_runtime}


class TestSqliteConformance(StorageConformance):
    @pytest.fixture(params=sorted(RUNTIMES))
    def storage(
        self, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> Iterator[StorageUnderTest]:
        env = {STORAGE_DIR_ENV: str(tmp_path)}
        monkeypatch.setenv(STORAGE_DIR_ENV, str(tmp_path))  # before a server starts
        attributes = {"db_file": "conformance.db"}
        with RUNTIMES[request.param]() as rt:
            rt.define("sqlite_storage", "db", attributes)
            yield StorageUnderTest(rt, "db", "sqlite_storage", attributes, env)
