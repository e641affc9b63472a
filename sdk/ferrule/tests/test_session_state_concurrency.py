"""Two processes running agents on one session keep every change either made to its state.

Each run reads the session's state, its tools change it, and the run stores it with the
version it read (compare-and-set); a run that finds the state changed by the other process
re-applies its own change to the stored state (`ferrule_kit.stores.statemerge`) and stores again.
Before, the last run to store its state overwrote the other process's items.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from ferrule import Agent, Runtime
from ferrule.db.postgres import PostgresDb
from ferrule.db.sqlite import SqliteDb
from ferrule_kit.testing.postgres import PostgresServer, postgres_server_fixture
from ferrule_testmodel import TestModel

pytestmark = pytest.mark.timeout(300)

postgres_server = postgres_server_fixture()

RUNS, CALLS_PER_RUN = 50, 1  # 50 tool calls a process, each in a run of its own

_WORKER = r"""
import json, sys
from ferrule import Agent, Runtime
from ferrule.db.postgres import PostgresDb
from ferrule.db.sqlite import SqliteDb
from ferrule.tools import ToolContext
from ferrule_testmodel import TestModel

spec = json.loads(sys.argv[1])


def add_item(item: str, context: ToolContext) -> str:
    '''Add an item to the list.

    Args:
        item: The item.
    '''
    context.session_state["items"].append(item)
    return f"added {item}"


def call(item):
    return {"name": "add_item", "arguments": {"item": item}}


script = []
for run in range(spec["runs"]):
    items = [f"{spec['name']}-{run:02d}-{i}" for i in range(spec["calls"])]
    script += [{"tool_calls": [call(item) for item in items]}, "Added."]
if spec["backend"] == "sqlite":
    db = SqliteDb(db_file=spec["file"])
else:
    db = PostgresDb(db_url=spec["dsn"], db_schema=spec["schema"])
with Runtime() as rt:
    with Agent(rt, TestModel(script), db=db, tools=[add_item], session_id="shared",
               session_state={"items": []}) as agent:
        for _ in range(spec["runs"]):
            agent.run("Add the items.")
print("done", flush=True)
"""


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    if request.param == "sqlite":
        return {"backend": "sqlite", "file": str(tmp_path / "shared.db")}
    server: PostgresServer = request.getfixturevalue("postgres_server")
    schema = f"t_{uuid.uuid4().hex[:16]}"
    return {"backend": "postgres", "dsn": server.create_database(), "schema": schema}


def _db(store: dict[str, str]) -> SqliteDb | PostgresDb:
    if store["backend"] == "sqlite":
        return SqliteDb(db_file=store["file"])
    return PostgresDb(db_url=store["dsn"], db_schema=store["schema"])


def test_two_processes_appending_to_one_state_list_keep_every_item(
    store: dict[str, str],
) -> None:
    with Runtime() as rt, Agent(rt, TestModel([]), db=_db(store), session_id="shared") as agent:
        agent.update_session_state({"items": []})  # the store exists before both start
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _WORKER,
                json.dumps({**store, "name": name, "runs": RUNS, "calls": CALLS_PER_RUN}),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        for name in ("a", "b")
    ]
    for worker in workers:
        out, err = worker.communicate(timeout=240)
        assert worker.returncode == 0 and out.strip() == "done", err
    with Runtime() as rt, Agent(rt, TestModel([]), db=_db(store), session_id="shared") as agent:
        items = agent.get_session_state()["items"]
        session = agent.get_session()
    expected = {
        f"{name}-{run:02d}-{i}"
        for name in ("a", "b")
        for run in range(RUNS)
        for i in range(CALLS_PER_RUN)
    }
    assert len(items) == len(expected) == 100 and set(items) == expected
    for name in ("a", "b"):  # each process's items in the order its tools added them
        mine = [item for item in items if item.startswith(f"{name}-")]
        assert mine == sorted(mine)
    assert session is not None and len(session.runs) == 2 * RUNS
