"""Agno's db API on ferrule's storage: table names are the tables' real names (SQLite and
PostgreSQL), sessions an agent stored read back as Agno's ``AgentSession`` (runs, chat
history as Agno's ``Message``), memories filtered, sorted and paged as Agno's, refused
tables named."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from ferrule.agent import Agent
from ferrule.db.in_memory import InMemoryDb
from ferrule.db.postgres import PostgresDb
from ferrule.db.schemas import UserMemory
from ferrule.db.sqlite import AsyncSqliteDb, SqliteDb
from ferrule.db.utils import deserialize_session, serialize_session_json_fields
from ferrule.models.openai import OpenAIChat
from ferrule.session import AgentSession
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing.postgres import postgres_server_fixture

postgres_server = postgres_server_fixture()


def _tables(path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name for (name,) in rows}


def test_sqlite_table_names_are_the_files_tables(tmp_path, wire):
    path = tmp_path / "agent.db"
    db = SqliteDb(db_file=str(path), session_table="agno_sessions", memory_table="agno_memories")
    wire.says("Hello!")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), db=db, session_id="s-1", user_id="ada")
    agent.run("Hi")
    assert {"agno_sessions", "agno_sessions_runs", "agno_memories"} <= _tables(path)
    assert "sessions" not in _tables(path)
    session = db.get_session("s-1", user_id="ada")
    assert isinstance(session, AgentSession) and len(session.runs) == 1
    history = session.get_chat_history()
    assert [(m.role, m.content) for m in history] == [("user", "Hi"), ("assistant", "Hello!")]
    assert db.table_exists("agno_sessions") and not db.table_exists("sessions")
    # another set of tables in the same file shares nothing
    other = SqliteDb(db_file=str(path), session_table="other_sessions")
    assert other.get_sessions() == []
    with pytest.raises(InvalidInputError) as caught:
        SqliteDb(db_file=str(path), session_table="bad name; drop")
    assert caught.value.errors[0]["path"] == "sessions"


def test_agents_with_their_own_session_tables_share_one_memory_table(tmp_path, postgres_server):
    for made in (
        lambda **tables: SqliteDb(db_file=str(tmp_path / "shared.db"), **tables),
        lambda **tables: PostgresDb(db_url=postgres_server.dsn(), db_schema="shared", **tables),
    ):
        first = made(session_table="support_sessions", memory_table="memories")
        first.upsert_user_memory(UserMemory(memory="likes tea", user_id="ada"))
        for tables in ({}, {"session_table": "sales_sessions", "memory_table": "memories"}):
            second = made(**tables)
            assert [m.memory for m in second.get_user_memories(user_id="ada")] == ["likes tea"]
            assert second.get_sessions() == []


def test_postgres_table_names_are_the_schemas_tables(postgres_server):
    import psycopg

    url = postgres_server.dsn()
    db = PostgresDb(db_url=url, db_schema="agno", session_table="agno_sessions", memory_table="mem")
    db.upsert_user_memory(UserMemory(memory="likes tea", user_id="ada"))
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'agno'"
        ).fetchall()
    assert {"agno_sessions", "agno_sessions_runs", "mem"} <= {name for (name,) in rows}
    assert [m.memory for m in db.get_user_memories(user_id="ada")] == ["likes tea"]
    db.clear_memories()
    assert db.get_user_memories() == []


def test_memories_are_filtered_sorted_and_paged_as_agnos(tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "m.db"))
    for i, (user, text, topics) in enumerate(
        [
            ("ada", "likes tea", ["drinks"]),
            ("ada", "has a cat", ["pets"]),
            ("bob", "likes tea too", []),
        ]
    ):
        db.upsert_user_memory(
            UserMemory(
                memory=text, user_id=user, topics=topics, memory_id=f"m{i}", created_at=1000 + i
            )
        )
    assert [m.memory_id for m in db.get_user_memories()] == ["m2", "m1", "m0"]  # newest first
    assert [m.memory_id for m in db.get_user_memories(user_id="ada", sort_order="asc")] == [
        "m0",
        "m1",
    ]
    assert [m.memory_id for m in db.get_user_memories(search_content="TEA")] == ["m2", "m0"]
    assert [m.memory_id for m in db.get_user_memories(topics=["pets"])] == ["m1"]
    page, total = db.get_user_memories(limit=1, page=2, deserialize=False)
    assert total == 3 and [m["memory_id"] for m in page] == ["m1"]
    assert db.get_all_memory_topics() == ["drinks", "pets"]
    stats, users = db.get_user_memory_stats()
    assert users == 2 and {s["user_id"]: s["total_memories"] for s in stats} == {"ada": 2, "bob": 1}
    db.delete_user_memories(["m0", "m1"], user_id="bob")  # not bob's: nothing goes
    assert len(db.get_user_memories(user_id="ada")) == 2


def test_sessions_can_be_listed_renamed_and_deleted(tmp_path):
    db = InMemoryDb()
    for i in range(3):
        session = AgentSession(
            session_id=f"s{i}",
            user_id="ada",
            agent_id="helper",
            session_data={"session_name": f"chat {i}", "session_state": {"n": i}},
        )
        stored = db.upsert_session(session)
        assert stored.session_data["session_state"] == {"n": i}
    named = db.get_sessions(session_name="chat 1")
    assert [s.session_id for s in named] == ["s1"]
    sessions, total = db.get_sessions(
        user_id="ada", limit=2, sort_by="session_id", deserialize=False
    )
    assert total == 3 and len(sessions) == 2
    renamed = db.rename_session("s0", "agent", "first chat")
    assert renamed.session_data["session_name"] == "first chat"
    assert db.get_sessions(session_type="team") == []
    assert db.delete_session("s2", user_id="bob") is False and db.delete_session("s2")
    assert db.get_session("s2") is None
    record = serialize_session_json_fields(db.get_session("s0", deserialize=False))
    assert isinstance(record["session_data"], str)
    assert deserialize_session(None, record).session_data["session_name"] == "first chat"


def test_async_dbs_await_the_same_store(tmp_path):
    path = str(tmp_path / "a.db")

    async def main():
        db = AsyncSqliteDb(db_file=path)
        await db.upsert_user_memory(UserMemory(memory="likes jazz", user_id="ada"))
        return await db.get_user_memories(user_id="ada")

    assert [m.memory for m in asyncio.run(main())] == ["likes jazz"]
    assert [m.memory for m in SqliteDb(db_file=path).get_user_memories()] == ["likes jazz"]


def test_urls_and_engines_name_the_same_file_and_missing_tables_are_refused(tmp_path):
    path = tmp_path / "u.db"
    SqliteDb(db_url=f"sqlite:///{path}").upsert_user_memory(UserMemory(memory="m", user_id="u"))

    class Engine:  # what SQLAlchemy's engine offers: its url
        class url:
            database = str(path)

    assert len(SqliteDb(db_engine=Engine()).get_user_memories()) == 1
    with pytest.raises(InvalidInputError, match="no metrics table"):
        SqliteDb(db_file=str(path), metrics_table="metrics")
    # the knowledge table is made when the store opens (test_api_knowledge_contents.py)
    assert SqliteDb(db_file=str(path)).get_knowledge_contents() == ([], 0)
