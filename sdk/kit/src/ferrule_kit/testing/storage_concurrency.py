"""Storage conformance under concurrency: tasks and processes writing one store at once.

Mixed into `ferrule_kit.testing.storage.StorageConformance`: 256 concurrent sessions;
concurrent writers of one session losing nothing; two processes appending runs to one
session; two processes appending to one list in the session's state with compare-and-set
writes (re-read and re-apply on a conflict) keeping every item; a writer process killed
with SIGKILL mid-run losing no committed run and leaving the store usable.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from typing import Any

from ferrule_kernel import FerruleError

from .storage_fixtures import StorageUnderTest, make_run, new_id, user_message

__all__ = ["StorageConcurrencyChecks"]

_APPENDER = r"""
import asyncio, json, sys
from ferrule_kernel import Kernel

# The kernel itself, not ferrule's Runtime: this kit sits below the Runtime.
async def main(spec):
    kernel = Kernel()
    await kernel.define(spec["type"], "db", spec["attributes"], trusted=True)
    print("ready", flush=True)
    for i in range(spec["runs"]):
        run_id = f"{spec['prefix']}-{i:05d}"
        message = {"role": "user", "content": [{"type": "text", "text": "x" * spec["size"]}]}
        await kernel.call_method("db", "append_run", {"run": {
            "run_id": run_id, "session_id": spec["session_id"], "messages": [message]}})
        print(run_id, flush=True)

asyncio.run(main(json.loads(sys.argv[1])))
"""


# Appends its items to the session state's "items" list, one run each, the way an agent
# does: read the session, change its state, write it with the version read; on a conflict,
# read again and re-apply.
_STATE_WRITER = r"""
import asyncio, json, sys
from ferrule_kernel import Kernel
from ferrule_kit.errors import SessionStateConflictError

async def main(spec):
    kernel = Kernel()
    await kernel.define(spec["type"], "db", spec["attributes"], trusted=True)
    sid, conflicts = spec["session_id"], 0
    for i in range(spec["runs"]):
        item = f"{spec['prefix']}-{i:05d}"
        while True:
            session = (await kernel.call_method("db", "get_session", {"session_id": sid}))["session"]
            state = session["session_state"] if session else {}
            state["items"] = [*state.get("items", []), item]
            try:
                await kernel.call_method("db", "append_run", {
                    "run": {"run_id": item, "session_id": sid},
                    "session_state": state,
                    "state_version": session["state_version"] if session else 0,
                })
                break
            except SessionStateConflictError:
                conflicts += 1
    print(json.dumps({"conflicts": conflicts}), flush=True)

asyncio.run(main(json.loads(sys.argv[1])))
"""


class StorageConcurrencyChecks:
    """The contract's promises under concurrent writers (needs a ``storage`` fixture)."""

    # -- concurrency ---------------------------------------------------------------------------

    def test_storage_256_concurrent_sessions(self, storage: StorageUnderTest) -> None:
        sessions, per_session = 256, 3
        prefix = new_id("c")
        errors: list[BaseException] = []

        async def session(index: int) -> None:
            sid = f"{prefix}-{index}"
            for turn in range(per_session):
                run = make_run(sid, f"{sid}-{turn}", messages=[user_message(f"{index}/{turn}")])
                try:
                    await storage.acall("append_run", {"run": run})
                except FerruleError as exc:
                    errors.append(exc)

        async def main() -> None:
            await asyncio.gather(*(session(i) for i in range(sessions)))

        asyncio.run(main())
        assert errors == []
        for index in range(sessions):
            sid = f"{prefix}-{index}"
            assert storage.run_ids(sid) == [f"{sid}-{turn}" for turn in range(per_session)]
            assert storage.call("get_session", {"session_id": sid})["session"]["run_count"] == 3

    def test_storage_concurrent_writers_of_one_session(self, storage: StorageUnderTest) -> None:
        sid, writers, per_writer = new_id("s"), 8, 10
        storage.call("upsert_session", {"session_id": sid})

        async def writer(index: int) -> None:
            for turn in range(per_writer):
                await storage.acall(
                    "append_run", {"run": make_run(sid, f"{sid}-{index}-{turn:02d}")}
                )
                await storage.acall(
                    "update_session_state",
                    {"session_id": sid, "updates": {f"w{index}": turn}},
                )

        async def main() -> None:
            await asyncio.gather(*(writer(i) for i in range(writers)))

        asyncio.run(main())
        ids = storage.run_ids(sid)
        assert len(ids) == len(set(ids)) == writers * per_writer
        for index in range(writers):
            mine = [i for i in ids if i.startswith(f"{sid}-{index}-")]
            assert mine == sorted(mine)  # each writer's runs in its own order
        session = storage.call("get_session", {"session_id": sid})["session"]
        assert session["run_count"] == writers * per_writer
        assert session["session_state"] == {f"w{i}": per_writer - 1 for i in range(writers)}

    # -- processes -----------------------------------------------------------------------------

    def _child(
        self, storage: StorageUnderTest, script: str = _APPENDER, **spec: Any
    ) -> subprocess.Popen[str]:
        spec = {"type": storage.component_type, "attributes": storage.attributes, **spec}
        return subprocess.Popen(
            [sys.executable, "-c", script, json.dumps(spec)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **storage.env},
        )

    def test_storage_two_processes_write_one_session(self, storage: StorageUnderTest) -> None:
        sid, per_process = new_id("s"), 30
        children = [
            self._child(storage, session_id=sid, prefix=f"{sid}-{name}", runs=per_process, size=10)
            for name in ("a", "b")
        ]
        for child in children:
            _out, err = child.communicate(timeout=120)
            assert child.returncode == 0, err
        ids = storage.run_ids(sid)
        assert len(ids) == len(set(ids)) == 2 * per_process
        for name in ("a", "b"):
            mine = [i for i in ids if i.startswith(f"{sid}-{name}-")]
            assert mine == [f"{sid}-{name}-{i:05d}" for i in range(per_process)]
        assert storage.call("get_session", {"session_id": sid})["session"]["run_count"] == 60

    def test_storage_two_processes_append_to_one_state_list(
        self, storage: StorageUnderTest
    ) -> None:
        sid, per_process = new_id("s"), 50
        children = [
            self._child(storage, _STATE_WRITER, session_id=sid, prefix=name, runs=per_process)
            for name in ("a", "b")
        ]
        for child in children:
            _out, err = child.communicate(timeout=300)
            assert child.returncode == 0, err
        session = storage.call("get_session", {"session_id": sid})["session"]
        items = session["session_state"]["items"]
        assert sorted(items) == sorted(
            f"{name}-{i:05d}" for name in ("a", "b") for i in range(per_process)
        )
        for name in ("a", "b"):  # each writer's items in its own order
            mine = [item for item in items if item.startswith(f"{name}-")]
            assert mine == sorted(mine)
        assert session["run_count"] == 2 * per_process
        assert session["state_version"] == 2 * per_process  # one state write a run

    def test_storage_killed_writer_loses_no_committed_run(self, storage: StorageUnderTest) -> None:
        sid = new_id("s")
        # big runs, so that the kill most likely lands inside a transaction
        child = self._child(storage, session_id=sid, prefix=sid, runs=100_000, size=200_000)
        assert child.stdout is not None
        committed: list[str] = []
        try:
            for line in child.stdout:
                if line.strip() != "ready":
                    committed.append(line.strip())
                if len(committed) >= 5:
                    break
            child.send_signal(signal.SIGKILL)
            rest, err = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
        assert child.returncode == -signal.SIGKILL, err
        committed += rest.split()
        assert len(committed) >= 5, err
        stored = storage.run_ids(sid)
        # every run it saw committed is there, in order; at most one more (committed, but
        # killed before it could say so)
        assert stored[: len(committed)] == committed
        assert len(stored) - len(committed) <= 1
        session = storage.call("get_session", {"session_id": sid})["session"]
        assert session["run_count"] == len(stored)  # each run landed with its session update
        # and the store is usable: by this process and by a new one
        storage.call("append_run", {"run": make_run(sid, f"{sid}-after")})
        assert storage.run_ids(sid)[-1] == f"{sid}-after"
        again = self._child(storage, session_id=sid, prefix=f"{sid}-new", runs=2, size=1)
        _out, err = again.communicate(timeout=120)
        assert again.returncode == 0, err
        assert storage.run_ids(sid)[-2:] == [f"{sid}-new-00000", f"{sid}-new-00001"]
