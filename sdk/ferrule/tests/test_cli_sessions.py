"""``ferrule chat --session`` and ``ferrule sessions list|show|delete``, in subprocesses on
the test model and a real SQLite file (``--db``, or the default db in the storage
directory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

COUNTER = (
    "def reply(inputs):\n"
    "    return f'{len(inputs.messages)} messages, last: {inputs.messages[-1].text}'\n"
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A user with a storage directory of their own and a test-model function that tells
    how many messages the model was sent."""
    (tmp_path / "count_messages.py").write_text(COUNTER)
    variables = dict(os.environ)
    variables.update(
        FERRULE_STORAGE_DIR=str(tmp_path / "storage"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
        COLUMNS="200",
    )
    return variables


def ferrule(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ferrule.cli", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def chat(env: dict[str, str], question: str, *options: str) -> str:
    result = ferrule(
        env, "chat", "-m", "test", "-o", "function=count_messages:reply", *options, question
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_chat_session_is_stored_and_resumed(env, tmp_path):
    db = str(tmp_path / "chats.db")
    assert chat(env, "first", "--session", "work", "--db", db) == "1 messages, last: first"
    # a new process: the stored session's history comes first
    assert chat(env, "second", "--session", "work", "--db", db) == "3 messages, last: second"
    assert chat(env, "other", "--session", "home", "--db", db) == "1 messages, last: other"
    assert chat(env, "no session") == "1 messages, last: no session"
    assert Path(db).is_file()

    listed = ferrule(env, "sessions", "list", "--db", db, "--json")
    assert listed.returncode == 0, listed.stderr
    counts = {s["session_id"]: s["run_count"] for s in json.loads(listed.stdout)}
    assert counts == {"work": 2, "home": 1}
    table = ferrule(env, "sessions", "list", "--db", db).stdout
    assert "work" in table and "home" in table

    shown = ferrule(env, "sessions", "show", "work", "--db", db)
    assert shown.returncode == 0, shown.stderr
    lines = [line for line in shown.stdout.splitlines() if ">" in line]
    assert lines == [
        "user> first",
        "assistant> 1 messages, last: first",
        "user> second",
        "assistant> 3 messages, last: second",
    ]
    as_json = json.loads(ferrule(env, "sessions", "show", "work", "--db", db, "--json").stdout)
    assert [m["role"] for m in as_json["messages"]] == ["user", "assistant"] * 2

    deleted = ferrule(env, "sessions", "delete", "work", "--db", db)
    assert (deleted.returncode, deleted.stdout.strip()) == (0, "deleted session work")
    again = ferrule(env, "sessions", "delete", "work", "--db", db)
    assert again.returncode == 1 and "no session 'work'" in again.stderr
    missing = ferrule(env, "sessions", "show", "work", "--db", db)
    assert missing.returncode == 1 and "no session 'work'" in missing.stderr
    # deleted: the next chat of that name starts afresh
    assert chat(env, "anew", "--session", "work", "--db", db) == "1 messages, last: anew"


def test_without_db_the_sessions_live_in_the_storage_directory(env, tmp_path):
    assert chat(env, "hi", "--session", "default-db") == "1 messages, last: hi"
    assert (tmp_path / "storage" / "ferrule.db").is_file()
    listed = json.loads(ferrule(env, "sessions", "list", "--json").stdout)
    assert [s["session_id"] for s in listed] == ["default-db"]


def test_db_without_session_is_refused(env, tmp_path):
    result = ferrule(env, "chat", "-m", "test", "--db", str(tmp_path / "x.db"), "hi")
    assert result.returncode == 1
    assert "--db keeps a session: give --session NAME" in result.stderr
    assert not (tmp_path / "x.db").exists()
