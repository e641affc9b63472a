"""The SQL storage backend: the storage contract's logic, written once over a SQL dialect.

ferrule-sqlite and ferrule-postgres keep the same tables and differ only where SQL does
(`SqlDialect`). Each contract method is written here once, in `SqlStorage`, as a *plan*: a
generator that yields `Query`s and is sent each one's result, so one implementation serves
a blocking driver (sqlite3, run in a worker thread) and an async one (psycopg, on the event
loop). A backend subclasses `BlockingSqlBackend` or `AsyncSqlBackend`, which give it the
contract's methods, and supplies ``execute``: run a plan (`run_blocking` / `run_async`) on
a connection, in the transaction its `Plan.mode` names, with its driver's errors made the
contract's.

Writers of one session take turns: every write is one transaction, and `append_run`
first creates or touches its session's row (a row lock on Postgres; SQLite's write
transaction holds the file). A state write is a compare-and-set when the caller gives the
``state_version`` it read.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Generator, Sequence
from typing import Any

from ferrule_kit.errors import SessionNotFoundError, SessionStateConflictError, StorageConflictError
from ferrule_kit.stores.storage import (
    AppendRunInput,
    ClearMemoriesInput,
    GetMessagesInput,
    GetRunInput,
    GetRunsInput,
    ListMemoriesInput,
    ListSessionsInput,
    MemoryRef,
    RenameSessionInput,
    SchemaVersionInput,
    SessionRef,
    SetSessionSummaryInput,
    UpdateSessionStateInput,
    UpsertMemoryInput,
    UpsertSessionInput,
)
from ferrule_kit.stores.storagespec import METHODS

from .knowledge import KnowledgeContents
from .plan import (
    POSTGRES,
    SQLITE,
    Plan,
    Query,
    SqlDialect,
    Steps,
    marks,
    planned,
)
from .rows import (
    MEMORY_COLUMNS,
    RUN_SELECT,
    SESSION_COLUMNS,
    MessageWindow,
    dump_json,
    has_any_topic,
    load_json,
    memory_record,
    run_payload,
    run_record,
    session_record,
    summary_json,
)
from .run import run_async, run_blocking
from .tables import TableNames, table_name

__all__ = [
    "POSTGRES",
    "SQLITE",
    "AsyncSqlBackend",
    "BlockingSqlBackend",
    "Plan",
    "Query",
    "SqlDialect",
    "SqlStorage",
    "TableNames",
    "run_async",
    "run_blocking",
    "table_name",
]

#: Runs read per query while `get_messages` fills a ``limit`` without ``last_n_runs``.
PAGE = 16


def _where_owned(sql: str, key: str, column: str, owner: str | None) -> tuple[str, list[str]]:
    """``sql`` (ending in a one-key WHERE) and its arguments, narrowed to rows whose
    ``column`` is ``owner`` when one is given: a run of a session, a memory of a user."""
    if owner is None:
        return sql, [key]
    return f"{sql} AND {column} = ?", [key, owner]


class SqlStorage(KnowledgeContents):
    """The storage contract's methods as plans, for the tables of one store.

    ``prefix`` qualifies the table names (a Postgres schema: ``"ferrule."``), ``tables``
    names them (`TableNames`: the defaults unless given); ``latest`` is
    the newest schema version the backend knows; ``backend`` and ``store`` name the store
    in errors (never with a password).
    """

    def __init__(
        self,
        dialect: SqlDialect,
        *,
        backend: str,
        store: str,
        latest: int,
        prefix: str = "",
        tables: TableNames | None = None,
    ) -> None:
        self.dialect = dialect
        self.backend = backend
        self.store = store
        self.latest = latest
        t = tables or TableNames()
        self.sessions, self.runs = prefix + t.sql(t.sessions), prefix + t.sql(t.runs)
        self.memories, self.schema_table = prefix + t.sql(t.memories), prefix + t.sql(t.schema)
        self.knowledge = prefix + t.knowledge_sql
        self._session_sql = f"SELECT {', '.join(SESSION_COLUMNS)} FROM {self.sessions}"
        self._run_sql = f"SELECT {', '.join(RUN_SELECT)} FROM {self.runs}"
        self._memory_sql = f"SELECT {', '.join(MEMORY_COLUMNS)} FROM {self.memories}"

    def _session(self, session_id: str) -> Generator[Query, Any, dict[str, Any] | None]:
        row = yield self._query(f"{self._session_sql} WHERE session_id = ?", (session_id,), "one")
        return None if row is None else session_record(row)

    def _not_found(self, session_id: str) -> SessionNotFoundError:
        return SessionNotFoundError(
            f"no session {session_id!r} in {self.store}",
            backend=self.backend,
            store=self.store,
            session_id=session_id,
        )

    def _changed_session(self, session_id: str) -> Generator[Query, Any, dict[str, Any]]:
        session = yield from self._session(session_id)
        if session is None:
            raise self._not_found(session_id)
        return session

    def _check_state_version(self, session_id: str, expected: int | None, actual: int) -> None:
        if expected is not None and expected != actual:
            raise SessionStateConflictError(
                f"the state of session {session_id!r} in {self.store} changed since it was "
                f"read (version {expected}, now {actual}): read it again and re-apply the change",
                backend=self.backend,
                store=self.store,
                session_id=session_id,
                expected=expected,
                actual=actual,
            )

    # -- schema ---------------------------------------------------------------------------

    @planned("snapshot")
    def schema_version(self, _inputs: SchemaVersionInput) -> Steps:
        row = yield self._query(f"SELECT max(version) FROM {self.schema_table}", (), "one")
        version = (row[0] if row else None) or 0
        return {"version": version, "latest": self.latest, "backend": self.backend}

    # -- sessions -------------------------------------------------------------------------

    @planned("write")
    def upsert_session(self, inputs: UpsertSessionInput) -> Steps:
        values = (
            inputs.session_id,
            inputs.user_id,
            inputs.agent_id,
            inputs.name,
            dump_json(inputs.session_state, "$.session_state"),
            summary_json(inputs.summary),
            dump_json(inputs.metadata, "$.metadata"),
        )
        now = time.time()
        # The state is written: its version moves on (1 for a new session, whose state a
        # reader that found no session would otherwise overwrite unseen).
        yield self._query(
            f"INSERT INTO {self.sessions} (session_id, user_id, agent_id, name, session_state, "
            "summary, metadata, created_at, updated_at, state_version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1) "
            "ON CONFLICT (session_id) DO UPDATE SET user_id = excluded.user_id, "
            "agent_id = excluded.agent_id, name = excluded.name, "
            "session_state = excluded.session_state, summary = excluded.summary, "
            "metadata = excluded.metadata, updated_at = excluded.updated_at, "
            f"state_version = {self.sessions}.state_version + 1",
            (*values, now, now),
        )
        return {"session": (yield from self._session(inputs.session_id))}

    @planned("plain")
    def get_session(self, inputs: SessionRef) -> Steps:
        return {"session": (yield from self._session(inputs.session_id))}

    @planned("plain")
    def list_sessions(self, inputs: ListSessionsInput) -> Steps:
        where, args = [], []
        for column in ("user_id", "agent_id"):
            if getattr(inputs, column) is not None:
                where.append(f"{column} = ?")
                args.append(getattr(inputs, column))
        sql = self._session_sql + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY updated_at DESC, session_id LIMIT ? OFFSET ?"
        rows = yield self._query(sql, (*args, inputs.limit, inputs.offset), "all")
        return {"sessions": [session_record(row) for row in rows]}

    @planned("write")
    def rename_session(self, inputs: RenameSessionInput) -> Steps:
        yield self._query(
            f"UPDATE {self.sessions} SET name = ?, updated_at = ? WHERE session_id = ?",
            (inputs.name, time.time(), inputs.session_id),
        )
        return {"session": (yield from self._changed_session(inputs.session_id))}

    @planned("write")
    def update_session_state(self, inputs: UpdateSessionStateInput) -> Steps:
        row = yield self._query(
            f"SELECT session_state, state_version FROM {self.sessions} WHERE session_id = ?"
            + self.dialect.lock_row,
            (inputs.session_id,),
            "one",
        )
        if row is None:
            raise self._not_found(inputs.session_id)
        self._check_state_version(inputs.session_id, inputs.state_version, row[1])
        state = dict(inputs.updates) if inputs.replace else {**load_json(row[0]), **inputs.updates}
        yield self._query(
            f"UPDATE {self.sessions} SET session_state = ?, updated_at = ?, "
            "state_version = state_version + 1 WHERE session_id = ?",
            (dump_json(state, "$.updates"), time.time(), inputs.session_id),
        )
        return {"session": (yield from self._session(inputs.session_id))}

    @planned("write")
    def set_session_summary(self, inputs: SetSessionSummaryInput) -> Steps:
        yield self._query(
            f"UPDATE {self.sessions} SET summary = ?, updated_at = ? WHERE session_id = ?",
            (summary_json(inputs.summary), time.time(), inputs.session_id),
        )
        return {"session": (yield from self._changed_session(inputs.session_id))}

    @planned("write")
    def delete_session(self, inputs: SessionRef) -> Steps:
        deleted = yield self._query(
            f"DELETE FROM {self.sessions} WHERE session_id = ?", (inputs.session_id,), "rowcount"
        )
        return {"deleted": deleted}

    # -- runs -----------------------------------------------------------------------------

    @planned("write")
    def append_run(self, inputs: AppendRunInput) -> Steps:
        run = inputs.run
        payload, messages = run_payload(run)
        state = (
            None
            if inputs.session_state is None
            else dump_json(inputs.session_state, "$.session_state")
        )
        summary = summary_json(inputs.summary)
        now = time.time()
        # Creating or touching the session's row first makes appends to one session take
        # turns here, whatever process they come from (and the version read below current).
        yield self._query(
            f"INSERT INTO {self.sessions} (session_id, user_id, agent_id, session_state, "
            "metadata, created_at, updated_at) VALUES (?, ?, ?, '{}', '{}', ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET updated_at = excluded.updated_at",
            (run.session_id, run.user_id, run.agent_id, now, now),
        )
        stored = yield self._query(
            f"SELECT session_id, created_at FROM {self.runs} WHERE run_id = ?",
            (run.run_id,),
            "one",
        )
        if stored is not None and stored[0] != run.session_id:
            raise StorageConflictError(
                f"run {run.run_id!r} is stored in another session",
                backend=self.backend,
                store=self.store,
                run_id=run.run_id,
            )
        if state is not None and inputs.state_version is not None:
            version = yield self._query(
                f"SELECT state_version FROM {self.sessions} WHERE session_id = ?",
                (run.session_id,),
                "one",
            )
            self._check_state_version(run.session_id, inputs.state_version, version[0])
        yield self._query(
            f"UPDATE {self.sessions} SET run_count = run_count + ?, "
            "session_state = coalesce(?, session_state), summary = coalesce(?, summary), "
            "state_version = state_version + ? WHERE session_id = ?",
            (int(stored is None), state, summary, int(state is not None), run.session_id),
        )
        # A replaced run keeps its first created_at unless it brings one.
        created = run.created_at
        if created is None:
            created = now if stored is None else stored[1]
        columns = (run.user_id, run.agent_id, run.status, payload, messages, created, now)
        if stored is None:
            yield self._query(
                f"INSERT INTO {self.runs} (run_id, session_id, user_id, agent_id, status, "
                "payload, messages, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run.run_id, run.session_id, *columns),
            )
        else:
            yield self._query(
                f"UPDATE {self.runs} SET user_id = ?, agent_id = ?, status = ?, payload = ?, "
                "messages = ?, created_at = ?, updated_at = ? WHERE run_id = ?",
                (*columns, run.run_id),
            )
        session = yield from self._session(run.session_id)
        return {"session": session, "replaced": stored is not None}

    @planned("plain")
    def get_run(self, inputs: GetRunInput) -> Steps:
        sql, args = _where_owned(
            f"{self._run_sql} WHERE run_id = ?", inputs.run_id, "session_id", inputs.session_id
        )
        row = yield self._query(sql, args, "one")
        return {"run": None if row is None else run_record(row)}

    @staticmethod
    def _window(
        session_id: str, statuses: Sequence[str] | None, skip_statuses: Sequence[str]
    ) -> tuple[str, list[Any]]:
        """The WHERE clause of a session's runs filtered by status (uses runs_window)."""
        where, args = "session_id = ?", [session_id]
        if statuses is not None:
            where += f" AND status IN ({marks(statuses)})" if statuses else " AND 1 = 0"
            args += statuses
        if skip_statuses:
            where += f" AND status NOT IN ({marks(skip_statuses)})"
            args += skip_statuses
        return where, args

    @planned("plain")
    def get_runs(self, inputs: GetRunsInput) -> Steps:
        where, args = self._window(inputs.session_id, inputs.statuses, inputs.skip_statuses)
        sql = f"{self._run_sql} WHERE {where} ORDER BY id DESC"
        if inputs.last_n_runs is not None:
            sql += " LIMIT ?"
            args.append(inputs.last_n_runs)
        rows = yield self._query(sql, args, "all")
        return {"runs": [run_record(row) for row in reversed(rows)]}

    @planned("snapshot")
    def get_messages(self, inputs: GetMessagesInput) -> Steps:
        """Each run's messages, newest first, into the window until it is filled: a
        ``limit`` is met after a few runs, mostly, so runs are then read a page at a time.
        Pages read by "id < the last id seen" neither repeat nor skip a run."""
        where, args = self._window(inputs.session_id, None, inputs.skip_statuses)
        window = MessageWindow(frozenset(inputs.skip_roles), inputs.limit)
        runs = inputs.last_n_runs  # left to read; None: all
        page = PAGE if inputs.limit is not None else None
        last_id = None
        while runs is None or runs > 0:
            size = runs if page is None else page if runs is None else min(page, runs)
            sql, query_args = f"SELECT id, messages FROM {self.runs} WHERE {where}", list(args)
            if last_id is not None:
                sql += " AND id < ?"
                query_args.append(last_id)
            sql += " ORDER BY id DESC"
            if size is not None:
                sql += " LIMIT ?"
                query_args.append(size)
            rows = yield self._query(sql, query_args, "all")
            for _row_id, messages in rows:
                if window.add(load_json(messages)):
                    return {"messages": window.messages()}
            if size is None or len(rows) < size:
                break
            last_id = rows[-1][0]
            if runs is not None:
                runs -= len(rows)
        return {"messages": window.messages()}

    # -- user memories --------------------------------------------------------------------

    @planned("write")
    def upsert_memory(self, inputs: UpsertMemoryInput) -> Steps:
        memory_id = inputs.memory_id or uuid.uuid4().hex
        topics = dump_json(inputs.topics, "$.topics")
        now = time.time()
        # The WHERE makes the update a no-op for another user's memory: no row changed.
        changed = yield self._query(
            f"INSERT INTO {self.memories} (memory_id, user_id, agent_id, memory, topics, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (memory_id) DO UPDATE SET agent_id = excluded.agent_id, "
            "memory = excluded.memory, topics = excluded.topics, "
            f"updated_at = excluded.updated_at WHERE {self.memories}.user_id = excluded.user_id",
            (memory_id, inputs.user_id, inputs.agent_id, inputs.memory, topics, now, now),
            "rowcount",
        )
        if not changed:
            raise StorageConflictError(
                f"memory {memory_id!r} belongs to another user",
                backend=self.backend,
                store=self.store,
                memory_id=memory_id,
            )
        row = yield self._query(f"{self._memory_sql} WHERE memory_id = ?", (memory_id,), "one")
        return {"memory": memory_record(row)}

    @planned("plain")
    def get_memory(self, inputs: MemoryRef) -> Steps:
        sql, args = _where_owned(
            f"{self._memory_sql} WHERE memory_id = ?", inputs.memory_id, "user_id", inputs.user_id
        )
        row = yield self._query(sql, args, "one")
        return {"memory": None if row is None else memory_record(row)}

    @planned("plain")
    def list_memories(self, inputs: ListMemoriesInput) -> Steps:
        args: tuple[str, ...] = ()
        if inputs.user_id is None:
            sql = f"{self._memory_sql} ORDER BY created_at, memory_id"
        else:
            where = "WHERE user_id = ? ORDER BY created_at, memory_id"
            sql, args = f"{self._memory_sql} {where}", (inputs.user_id,)
        rows = yield self._query(sql, args, "all")
        # Topics are filtered here: one user's memories are few, and the JSON stays as text.
        memories = [m for m in map(memory_record, rows) if has_any_topic(m, inputs.topics)]
        return {"memories": memories[: inputs.limit]}

    @planned("write")
    def delete_memory(self, inputs: MemoryRef) -> Steps:
        sql, args = _where_owned(
            f"DELETE FROM {self.memories} WHERE memory_id = ?",
            inputs.memory_id,
            "user_id",
            inputs.user_id,
        )
        return {"deleted": (yield self._query(sql, args, "rowcount"))}

    @planned("write")
    def clear_memories(self, inputs: ClearMemoriesInput) -> Steps:
        if inputs.user_id is None:
            deleted = yield self._query(f"DELETE FROM {self.memories}", (), "rowcount")
        else:
            deleted = yield self._query(
                f"DELETE FROM {self.memories} WHERE user_id = ?", (inputs.user_id,), "rowcount"
            )
        return {"deleted": deleted}


# -- the contract's methods on a backend ------------------------------------------------


class BlockingSqlBackend:
    """A storage component whose methods are plain functions (the kernel runs them in a
    worker thread): each runs its `SqlStorage` plan through ``execute``."""

    sql: SqlStorage

    def execute(self, plan: Plan) -> dict[str, Any]:
        raise NotImplementedError


class AsyncSqlBackend:
    """A storage component whose methods are coroutines: each runs its `SqlStorage` plan
    through ``execute``."""

    sql: SqlStorage

    async def execute(self, plan: Plan) -> dict[str, Any]:
        raise NotImplementedError


# The contract's methods are listed once (`storagespec.METHODS`); each backend class gets
# one per method, calling that method's plan, rather than a hand-written copy of the list.
def _blocking_method(name: str) -> Callable[[BlockingSqlBackend, Any], dict[str, Any]]:
    def method(self: BlockingSqlBackend, inputs: Any) -> dict[str, Any]:
        return self.execute(getattr(self.sql, name)(inputs))

    return method


def _async_method(name: str) -> Callable[[AsyncSqlBackend, Any], Any]:
    async def method(self: AsyncSqlBackend, inputs: Any) -> dict[str, Any]:
        return await self.execute(getattr(self.sql, name)(inputs))

    return method


for _name, _inputs, _description in METHODS:
    for _cls, _make in ((BlockingSqlBackend, _blocking_method), (AsyncSqlBackend, _async_method)):
        _method: Any = _make(_name)
        _method.__name__ = _name
        _method.__qualname__ = f"{_cls.__name__}.{_name}"
        _method.__doc__ = _description
        setattr(_cls, _name, _method)
del _name, _inputs, _description, _cls, _make, _method
