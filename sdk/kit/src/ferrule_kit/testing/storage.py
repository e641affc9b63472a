"""`StorageConformance`: the storage contract of `ferrule_kit.stores.storage` as a test suite that
any storage backend (ours or a third party's) runs against itself.

Subclass it in your plugin's tests and provide a ``storage`` fixture yielding a
`StorageUnderTest`: a `ferrule.Runtime` with a fresh, empty store defined, and what a
child process needs to open the same store (component type, attributes, environment)::

    from ferrule_kit.testing.storage import StorageConformance, StorageUnderTest

    class TestMyStorageConformance(StorageConformance):
        @pytest.fixture
        def storage(self, tmp_path):
            env = {"MY_STORE_DIR": str(tmp_path)}
            with Runtime() as rt:
                rt.define("my_storage", "db", {"file": "t.db"})
                yield StorageUnderTest(rt, "db", "my_storage", {"file": "t.db"}, env)

Checked, through the kernel with JSON-shaped inputs and outputs (each output must structure
into its declared result class): every method of the contract declared; sessions created,
replaced, renamed, their state merged and replaced, summaries set and cleared, listed and
deleted with their runs; state versions and compare-and-set writes of the state; runs
appended with their session's update, replaced in place, refused across sessions; windowed
reads (``last_n_runs``, ``limit``, ``skip_roles``, ``statuses``, ``skip_statuses``; a
window cut by ``limit`` opening on no orphaned tool result); user memories; typed errors
for bad input and missing sessions; runs and session state read back exactly as written
(hypothesis); from `ferrule_kit.testing.storage_concurrency`, concurrent writers and
processes losing nothing; and, from `ferrule_kit.testing.storage_knowledge`, knowledge
contents.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from ferrule_kernel import InvalidInputError
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrule_kit.errors import SessionNotFoundError, SessionStateConflictError, StorageConflictError
from ferrule_kit.stores.storage import (
    AppendRunResult,
    DeletedResult,
    MemoriesResult,
    MemoryResult,
    MessagesResult,
    Run,
    RunResult,
    RunsResult,
    SchemaVersionResult,
    SessionResult,
    SessionsResult,
    converter,
)
from ferrule_kit.stores.storagespec import METHODS

from .storage_concurrency import StorageConcurrencyChecks
from .storage_fixtures import (
    SHARED_STORE,
    StorageUnderTest,
    assistant_message,
    ids,
    json_objects,
    json_values,
    make_run,
    message_texts,
    new_id,
    runs,
    tool_message,
    user_message,
)
from .storage_knowledge import StorageKnowledgeChecks

__all__ = ["StorageConformance", "StorageUnderTest", "json_values", "runs"]


class StorageConformance(StorageConcurrencyChecks, StorageKnowledgeChecks):
    """The storage contract, checked. Subclass it and override the ``storage`` fixture."""

    @pytest.fixture
    def storage(self) -> StorageUnderTest:
        pytest.fail("a StorageConformance subclass must override the 'storage' fixture")

    # -- the contract as declared ------------------------------------------------------------

    def test_storage_declares_the_contract(self, storage: StorageUnderTest) -> None:
        types = {t["name"]: t for t in storage.runtime.component_types()}
        declared = {m["name"] for m in types[storage.component_type]["methods"]}
        assert declared >= {name for name, _inputs, _description in METHODS}

    def test_storage_schema_is_current(self, storage: StorageUnderTest) -> None:
        info = storage.call("schema_version", {}, SchemaVersionResult)
        assert info["version"] == info["latest"] >= 1
        assert isinstance(info["backend"], str) and info["backend"]

    # -- sessions ------------------------------------------------------------------------

    def test_storage_session_lifecycle(self, storage: StorageUnderTest) -> None:
        sid = new_id("s")
        assert storage.call("get_session", {"session_id": sid}, SessionResult) == {"session": None}
        fields = {
            "session_id": sid,
            "user_id": "u1",
            "agent_id": "a1",
            "name": "first",
            "session_state": {"cart": ["apple"], "n": 1},
            "summary": {"summary": "talked", "topics": ["fruit"], "updated_at": 12.5},
            "metadata": {"source": "test"},
        }
        created = storage.call("upsert_session", fields, SessionResult)["session"]
        assert {k: created[k] for k in fields} == fields
        assert created["run_count"] == 0 and created["created_at"] == created["updated_at"] > 0
        assert storage.call("get_session", {"session_id": sid})["session"] == created

        replaced = storage.call(
            "upsert_session", {"session_id": sid, "name": "second"}, SessionResult
        )["session"]
        assert replaced["name"] == "second" and replaced["user_id"] is None
        assert replaced["session_state"] == {} and replaced["summary"] is None
        assert replaced["created_at"] == created["created_at"]
        assert replaced["updated_at"] >= created["updated_at"]

        renamed = storage.call("rename_session", {"session_id": sid, "name": "third"})["session"]
        assert renamed["name"] == "third"

        storage.call("update_session_state", {"session_id": sid, "updates": {"a": 1, "b": [2]}})
        merged = storage.call(
            "update_session_state", {"session_id": sid, "updates": {"b": None, "c": {"d": 3}}}
        )["session"]
        assert merged["session_state"] == {"a": 1, "b": None, "c": {"d": 3}}
        state = storage.call(
            "update_session_state", {"session_id": sid, "updates": {"z": 0}, "replace": True}
        )["session"]["session_state"]
        assert state == {"z": 0}

        summary: dict[str, Any] = {"summary": "short", "topics": [], "updated_at": None}
        with_summary = storage.call(
            "set_session_summary", {"session_id": sid, "summary": summary}, SessionResult
        )["session"]
        assert with_summary["summary"] == summary
        cleared = storage.call("set_session_summary", {"session_id": sid, "summary": None})
        assert cleared["session"]["summary"] is None

        run = make_run(sid)
        storage.call("append_run", {"run": run}, AppendRunResult)
        assert storage.call("delete_session", {"session_id": sid}, DeletedResult) == {"deleted": 1}
        assert storage.call("get_session", {"session_id": sid})["session"] is None
        assert storage.call("get_run", {"run_id": run["run_id"]})["run"] is None
        assert storage.call("delete_session", {"session_id": sid}) == {"deleted": 0}

    def test_storage_state_writes_are_versioned_and_compare_and_set(
        self, storage: StorageUnderTest
    ) -> None:
        sid = new_id("s")
        run = make_run(sid)
        first = storage.call(
            "append_run", {"run": run, "session_state": {"n": 1}, "state_version": 0}
        )["session"]
        assert first["session_state"] == {"n": 1} and first["state_version"] == 1
        plain_run = make_run(sid)
        without_state = storage.call("append_run", {"run": plain_run})["session"]
        assert without_state["state_version"] == 1  # no state written, no new version
        stale = {"run": make_run(sid), "session_state": {"n": 2}, "state_version": 0}
        with pytest.raises(SessionStateConflictError) as caught:
            storage.call("append_run", stale)
        assert caught.value.kind == "session_state_conflict"
        assert isinstance(caught.value, StorageConflictError)
        assert caught.value.details["session_id"] == sid
        assert (caught.value.details["expected"], caught.value.details["actual"]) == (0, 1)
        session = storage.call("get_session", {"session_id": sid})["session"]
        assert storage.run_ids(sid) == [run["run_id"], plain_run["run_id"]]
        assert session["session_state"] == {"n": 1} and session["run_count"] == 2  # nothing
        assert session["state_version"] == 1
        updated = storage.call(
            "update_session_state", {"session_id": sid, "updates": {"m": 1}, "state_version": 1}
        )["session"]
        assert updated["session_state"] == {"n": 1, "m": 1} and updated["state_version"] == 2
        with pytest.raises(SessionStateConflictError):
            storage.call(
                "update_session_state",
                {"session_id": sid, "updates": {"m": 2}, "replace": True, "state_version": 1},
            )
        unchecked = storage.call("update_session_state", {"session_id": sid, "updates": {"m": 3}})
        assert unchecked["session"]["state_version"] == 3  # without a version: always written
        replaced = storage.call("upsert_session", {"session_id": sid, "session_state": {}})
        assert replaced["session"]["state_version"] == 4
        # a session created with its state has version 1: a writer that found none conflicts
        other = new_id("s")
        created = storage.call("upsert_session", {"session_id": other, "session_state": {"a": 1}})
        assert created["session"]["state_version"] == 1
        with pytest.raises(SessionStateConflictError):
            storage.call(
                "append_run",
                {"run": make_run(other), "session_state": {"b": 1}, "state_version": 0},
            )
        assert storage.run_ids(other) == []

    def test_storage_changing_a_missing_session_is_refused(self, storage: StorageUnderTest) -> None:
        sid = new_id("missing")
        for method, inputs in (
            ("rename_session", {"session_id": sid, "name": "x"}),
            ("update_session_state", {"session_id": sid, "updates": {"a": 1}}),
            ("set_session_summary", {"session_id": sid, "summary": None}),
        ):
            with pytest.raises(SessionNotFoundError) as caught:
                storage.call(method, inputs)
            assert caught.value.kind == "session_not_found"
            assert caught.value.details["session_id"] == sid
        assert storage.call("get_session", {"session_id": sid})["session"] is None

    def test_storage_list_sessions(self, storage: StorageUnderTest) -> None:
        user = new_id("u")
        made = []
        for index in range(5):
            sid = new_id(f"s{index}")
            storage.call(
                "upsert_session",
                {"session_id": sid, "user_id": user, "agent_id": "even" if index % 2 else "odd"},
            )
            made.append(sid)
            time.sleep(0.002)  # distinct updated_at
        storage.call("upsert_session", {"session_id": new_id("other"), "user_id": "someone"})
        listed = storage.call("list_sessions", {"user_id": user}, SessionsResult)["sessions"]
        assert [s["session_id"] for s in listed] == made[::-1]
        odd = storage.call("list_sessions", {"user_id": user, "agent_id": "odd"})["sessions"]
        assert [s["session_id"] for s in odd] == [made[4], made[2], made[0]]
        page = storage.call("list_sessions", {"user_id": user, "limit": 2, "offset": 1})
        assert [s["session_id"] for s in page["sessions"]] == [made[3], made[2]]
        everyone = storage.call("list_sessions", {})["sessions"]
        assert {s["session_id"] for s in everyone} >= set(made)

    # -- runs ----------------------------------------------------------------------------

    def test_storage_append_run_updates_its_session(self, storage: StorageUnderTest) -> None:
        sid = new_id("s")
        first = storage.call(
            "append_run",
            {"run": make_run(sid, user_id="u", agent_id="a"), "session_state": {"step": 1}},
            AppendRunResult,
        )
        assert first["replaced"] is False
        session = first["session"]
        assert (session["session_id"], session["user_id"], session["agent_id"]) == (sid, "u", "a")
        assert session["run_count"] == 1 and session["session_state"] == {"step": 1}
        summary = {"summary": "s", "topics": ["t"], "updated_at": 1.0}
        second = storage.call("append_run", {"run": make_run(sid), "summary": summary})["session"]
        assert second["run_count"] == 2
        assert second["session_state"] == {"step": 1}  # not given: kept
        assert second["summary"] == summary
        assert second["updated_at"] >= session["updated_at"]
        assert storage.call("get_session", {"session_id": sid})["session"] == second

    def test_storage_replacing_a_run_keeps_its_place(self, storage: StorageUnderTest) -> None:
        sid = new_id("s")
        ids = [new_id("r") for _ in range(3)]
        for run_id in ids:
            storage.call("append_run", {"run": make_run(sid, run_id)})
        paused = storage.call("get_run", {"run_id": ids[1]}, RunResult)["run"]
        result = storage.call(
            "append_run", {"run": make_run(sid, ids[1], status="paused", content="later")}
        )
        assert result["replaced"] is True and result["session"]["run_count"] == 3
        assert storage.run_ids(sid) == ids
        again = storage.call("get_run", {"run_id": ids[1]})["run"]
        assert (again["status"], again["content"]) == ("paused", "later")
        assert again["created_at"] == paused["created_at"]

    def test_storage_run_of_another_session_is_refused(self, storage: StorageUnderTest) -> None:
        run = make_run(new_id("s"))
        storage.call("append_run", {"run": run})
        other = new_id("s")
        with pytest.raises(StorageConflictError) as caught:
            storage.call("append_run", {"run": {**run, "session_id": other}})
        assert caught.value.kind == "storage_conflict"
        assert storage.call("get_session", {"session_id": other})["session"] is None
        assert storage.run_ids(run["session_id"]) == [run["run_id"]]

    def test_storage_paused_run_keeps_its_requirements(self, storage: StorageUnderTest) -> None:
        sid = new_id("s")
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "rm", "arguments": {"p": "/"}},
        }
        run = make_run(
            sid,
            status="paused",
            messages=[user_message("delete it"), {**assistant_message(""), "tool_calls": [call]}],
            requirements=[{"tool_call": call, "kind": "confirmation", "confirmed": None}],
            metadata={"resume": {"tool_calls_made": 1}},
        )
        storage.call("append_run", {"run": run})
        storage.call("append_run", {"run": make_run(sid)})
        paused = storage.call("get_runs", {"session_id": sid, "statuses": ["paused"]}, RunsResult)
        [stored] = paused["runs"]
        assert stored["requirements"] == [
            {
                "tool_call": call,
                "kind": "confirmation",
                "confirmed": None,
                "reason": None,
                "values": {},
            }
        ]
        assert stored["metadata"] == run["metadata"]
        by_id = storage.call("get_run", {"run_id": run["run_id"], "session_id": sid})["run"]
        assert by_id == stored

    def test_storage_get_run(self, storage: StorageUnderTest) -> None:
        sid = new_id("s")
        run = make_run(sid, content={"answer": 42}, content_type="dict")
        storage.call("append_run", {"run": run})
        stored = storage.call("get_run", {"run_id": run["run_id"]}, RunResult)["run"]
        assert (stored["content"], stored["content_type"]) == ({"answer": 42}, "dict")
        assert storage.call("get_run", {"run_id": run["run_id"], "session_id": "other"}) == {
            "run": None
        }
        assert storage.call("get_run", {"run_id": new_id("nope")}) == {"run": None}

    def test_storage_get_runs_window(self, storage: StorageUnderTest) -> None:
        sid = new_id("s")
        statuses = ["completed", "error", "completed", "paused", "completed", "cancelled"]
        ids = []
        for status in statuses:
            run = make_run(sid, status=status)
            storage.call("append_run", {"run": run})
            ids.append(run["run_id"])
        assert storage.run_ids(sid) == ids
        assert storage.run_ids(sid, last_n_runs=3) == ids[3:]
        assert storage.run_ids(sid, last_n_runs=100) == ids
        assert storage.run_ids(sid, last_n_runs=2, skip_statuses=["cancelled", "paused"]) == [
            ids[2],
            ids[4],
        ]
        assert storage.run_ids(sid, statuses=["completed"]) == [ids[0], ids[2], ids[4]]
        assert storage.run_ids(sid, statuses=[]) == []
        assert storage.run_ids(sid, last_n_runs=1) == [ids[-1]]  # the last run
        assert storage.run_ids(new_id("none")) == []

    def test_storage_get_messages_window(self, storage: StorageUnderTest) -> None:
        sid = new_id("s")
        turns = [
            (
                "completed",
                [
                    {"role": "system", "content": [{"type": "text", "text": "sys"}]},
                    user_message("q1"),
                    assistant_message("a1"),
                ],
            ),
            (
                "completed",
                [
                    user_message("q2"),
                    assistant_message("", "c2"),
                    tool_message("c2", "t2"),
                    assistant_message("a2"),
                ],
            ),
            ("error", [user_message("q3"), assistant_message("broken")]),
            (
                "completed",
                [
                    user_message("q4"),
                    assistant_message("", "c4"),
                    tool_message("c4", "t4"),
                    assistant_message("a4"),
                ],
            ),
        ]
        for status, messages in turns:
            storage.call("append_run", {"run": make_run(sid, status=status, messages=messages)})

        def texts(**window: Any) -> list[str]:
            result = storage.call("get_messages", {"session_id": sid, **window}, MessagesResult)
            return message_texts(result["messages"])

        assert texts() == [
            "sys",
            "q1",
            "a1",
            "q2",
            "",
            "t2",
            "a2",
            "q3",
            "broken",
            "q4",
            "",
            "t4",
            "a4",
        ]
        assert texts(last_n_runs=1) == ["q4", "", "t4", "a4"]
        assert texts(last_n_runs=2, skip_statuses=["error"]) == [
            "q2",
            "",
            "t2",
            "a2",
            "q4",
            "",
            "t4",
            "a4",
        ]
        chat = texts(skip_roles=["system", "tool"], skip_statuses=["error"])
        assert chat == ["q1", "a1", "q2", "", "a2", "q4", "", "a4"]
        assert texts(limit=2) == ["a4"]  # "t4" would open the window without its call
        assert texts(limit=3) == ["", "t4", "a4"]
        assert texts(limit=6, skip_statuses=["error"]) == ["a2", "q4", "", "t4", "a4"]
        assert texts(limit=2, skip_roles=["tool"]) == ["", "a4"]
        assert texts(last_n_runs=1, limit=100) == ["q4", "", "t4", "a4"]
        assert texts(limit=100) == texts()
        assert storage.call("get_messages", {"session_id": new_id("none")}) == {"messages": []}

    def test_storage_get_messages_pages_through_a_long_session(
        self, storage: StorageUnderTest
    ) -> None:
        sid = new_id("s")
        for index in range(40):
            storage.call(
                "append_run",
                {
                    "run": make_run(
                        sid,
                        status="error" if index % 3 == 0 else "completed",
                        messages=[user_message(str(index))],
                    )
                },
            )
        kept = [str(i) for i in range(40) if i % 3]
        got = storage.call(
            "get_messages", {"session_id": sid, "limit": 20, "skip_statuses": ["error"]}
        )
        assert message_texts(got["messages"]) == kept[-20:]
        got = storage.call("get_messages", {"session_id": sid, "last_n_runs": 30, "limit": 25})
        assert message_texts(got["messages"]) == [str(i) for i in range(15, 40)]

    # -- user memories ---------------------------------------------------------------------

    def test_storage_user_memories(self, storage: StorageUnderTest) -> None:
        user, other = new_id("u"), new_id("u")
        first = storage.call(
            "upsert_memory",
            {"user_id": user, "memory": "likes blue", "topics": ["colors"]},
            MemoryResult,
        )["memory"]
        assert first["memory_id"] and first["created_at"] == first["updated_at"] > 0
        time.sleep(0.002)
        second = storage.call(
            "upsert_memory",
            {
                "user_id": user,
                "memory": "has a cat",
                "topics": ["pets"],
                "memory_id": "m-cat",
                "agent_id": "a",
            },
        )["memory"]
        storage.call("upsert_memory", {"user_id": other, "memory": "not yours"})
        listed = storage.call("list_memories", {"user_id": user}, MemoriesResult)["memories"]
        assert [m["memory"] for m in listed] == ["likes blue", "has a cat"]
        assert listed[1] == second
        pets = storage.call("list_memories", {"user_id": user, "topics": ["pets", "x"]})["memories"]
        assert [m["memory_id"] for m in pets] == ["m-cat"]
        assert len(storage.call("list_memories", {"user_id": user, "limit": 1})["memories"]) == 1

        updated = storage.call(
            "upsert_memory", {"user_id": user, "memory": "has two cats", "memory_id": "m-cat"}
        )["memory"]
        assert updated["memory"] == "has two cats" and updated["topics"] == []
        assert updated["created_at"] == second["created_at"]
        with pytest.raises(StorageConflictError):
            storage.call(
                "upsert_memory", {"user_id": other, "memory": "mine", "memory_id": "m-cat"}
            )
        assert storage.call("get_memory", {"memory_id": "m-cat"})["memory"] == updated
        assert storage.call("get_memory", {"memory_id": "m-cat", "user_id": other}) == {
            "memory": None
        }

        assert storage.call("delete_memory", {"memory_id": "m-cat", "user_id": other}) == {
            "deleted": 0
        }
        assert storage.call(
            "delete_memory", {"memory_id": "m-cat", "user_id": user}, DeletedResult
        ) == {"deleted": 1}
        assert storage.call("clear_memories", {"user_id": user}) == {"deleted": 1}
        assert storage.call("list_memories", {"user_id": user})["memories"] == []
        assert len(storage.call("list_memories", {"user_id": other})["memories"]) == 1
        # without a user: every user's
        everyone = storage.call("list_memories", {})["memories"]
        assert [m["user_id"] for m in everyone] == [other]
        assert storage.call("clear_memories", {}) == {"deleted": 1}
        assert storage.call("list_memories", {})["memories"] == []

    # -- bad input ---------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("method", "inputs", "field"),
        [
            ("get_session", {"session_id": ""}, "$.session_id"),
            ("get_session", {"session_id": "x" * 256}, "$.session_id"),
            ("get_session", {"session_id": "a\x00b"}, "$.session_id"),
            ("get_session", {"session_id": "s", "extra": 1}, "$.extra"),
            ("rename_session", {"session_id": "s", "name": "\x00"}, "$.name"),
            (
                "append_run",
                {"run": {"run_id": "r", "session_id": "s", "status": "done"}},
                "$.run.status",
            ),
            ("append_run", {"run": {"run_id": "r"}}, "$.run.session_id"),
            ("get_runs", {"session_id": "s", "last_n_runs": 0}, "$.last_n_runs"),
            ("get_messages", {"session_id": "s", "skip_roles": ["robot"]}, "$.skip_roles[0]"),
            ("upsert_memory", {"user_id": "u", "memory": 3}, "$.memory"),
        ],
    )
    def test_storage_bad_input_names_the_field(
        self, storage: StorageUnderTest, method: str, inputs: dict[str, Any], field: str
    ) -> None:
        with pytest.raises(InvalidInputError) as caught:
            storage.call(method, inputs)
        assert field in [e["path"] for e in caught.value.errors], caught.value.errors

    def test_storage_refuses_what_is_not_json(self, storage: StorageUnderTest) -> None:
        sid = new_id("s")
        for metrics in ({"latency": float("nan")}, {"when": object()}):
            with pytest.raises(InvalidInputError):
                storage.call("append_run", {"run": make_run(sid, metrics=metrics)})
        assert storage.call("get_session", {"session_id": sid})["session"] is None

    # -- exact round trips ---------------------------------------------------------------------

    @settings(suppress_health_check=SHARED_STORE)
    @given(run=runs)
    def test_storage_run_round_trip(self, storage: StorageUnderTest, run: dict[str, Any]) -> None:
        run = {**run, "run_id": f"{uuid.uuid4().hex}{run['run_id']}", "session_id": new_id("s")}
        # what the contract's classes make of it: the kernel validates it into these
        expected = converter.unstructure(converter.structure(run, Run))
        storage.call("append_run", {"run": run}, AppendRunResult)
        stored = storage.call("get_run", {"run_id": run["run_id"]}, RunResult)["run"]
        if run.get("created_at") is None:
            assert isinstance(stored["created_at"], float)
            expected["created_at"] = stored["created_at"]
        expected["updated_at"] = stored["updated_at"]
        assert stored == expected
        # exactly: float spellings, -0.0, int vs float, key order
        assert json.dumps(stored) == json.dumps(expected)
        [windowed] = storage.call("get_runs", {"session_id": run["session_id"], "last_n_runs": 1})[
            "runs"
        ]
        assert json.dumps(windowed) == json.dumps(expected)
        messages = storage.call("get_messages", {"session_id": run["session_id"]})["messages"]
        assert json.dumps(messages) == json.dumps(expected["messages"])

    @settings(suppress_health_check=SHARED_STORE)
    @given(state=json_objects, metadata=json_objects, name=st.none() | ids)
    def test_storage_session_round_trip(
        self,
        storage: StorageUnderTest,
        state: dict[str, Any],
        metadata: dict[str, Any],
        name: str | None,
    ) -> None:
        sid = new_id("s")
        storage.call(
            "upsert_session",
            {"session_id": sid, "name": name, "session_state": state, "metadata": metadata},
        )
        stored = storage.call("get_session", {"session_id": sid})["session"]
        assert json.dumps(
            [stored["session_state"], stored["metadata"], stored["name"]]
        ) == json.dumps([state, metadata, name])
