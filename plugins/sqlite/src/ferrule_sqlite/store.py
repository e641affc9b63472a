"""`SqliteStorage`: the storage contract (`ferrule_kit.stores.storage`) on one SQLite file.

The contract's logic is the kit's (`ferrule_kit.stores.sql.store`); this module opens the file,
lends its connections and runs each method's plan in the transaction it asks for. The file
is in WAL mode, so readers never wait for the writer and a process killed mid-transaction
leaves the last commit intact: SQLite rolls the torn transaction back when the file is next
opened. Every write is one ``BEGIN IMMEDIATE`` transaction: it takes the file's write lock
first, so writers of one session (threads or processes) take turns rather than fail, and a
run lands whole with its session's update or not at all.

The methods are plain functions: async callers run them in a worker thread (the kernel does
that), so they never stall an event loop. Each borrows a connection from a small pool;
SQLite allows a connection in one thread at a time, and the pool hands it out that way.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ferrule_kernel import get_logger
from ferrule_kit.errors import StorageError, StorageUnavailableError
from ferrule_kit.stores.sql.store import (
    SQLITE,
    BlockingSqlBackend,
    Plan,
    SqlStorage,
    TableNames,
    run_blocking,
)
from ferrule_kit.stores.storefiles import resolve_store_file

from . import schema
from .attributes import SqliteStorageAttributes

log = get_logger("ferrule.sqlite")


class _Pool:
    """Up to ``size`` connections, each used by one thread at a time."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], size: int) -> None:
        self._connect = connect
        self._size = size
        self._idle: list[sqlite3.Connection] = []
        self._open = 0
        self._closed = False
        self._cond = threading.Condition()

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        with self._cond:
            while not self._idle and self._open >= self._size and not self._closed:
                self._cond.wait()
            if self._closed:
                raise StorageError("this storage component is closed")
            conn = self._idle.pop() if self._idle else None
            if conn is None:
                self._open += 1
        if conn is None:
            try:
                conn = self._connect()
            except BaseException:
                with self._cond:
                    self._open -= 1
                    self._cond.notify()
                raise
        try:
            yield conn
        finally:
            with self._cond:
                if self._closed:
                    conn.close()
                    self._open -= 1
                else:
                    self._idle.append(conn)
                self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            for conn in self._idle:
                conn.close()
            self._open -= len(self._idle)
            self._idle.clear()
            self._cond.notify_all()


class SqliteStorage(BlockingSqlBackend):
    """A storage component on the SQLite file ``path`` (see the module docstring)."""

    backend = "sqlite"

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout: float = 30.0,
        synchronous: str = "full",
        pool_size: int = 4,
        tables: TableNames | None = None,
    ) -> None:
        self.path = path
        self.store = str(path)
        self._busy_timeout = busy_timeout
        self._synchronous = synchronous.upper()
        self._pool = _Pool(self._connect, pool_size)
        self.tables = tables or TableNames()
        self.sql = SqlStorage(
            SQLITE, backend=self.backend, store=self.store, latest=schema.LATEST, tables=self.tables
        )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._unavailable(exc) from None
        with self._errors():
            conn = self._connect()
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode != "wal":  # e.g. a file system without shared memory
                    log.warning("sqlite_not_wal", store=self.store, journal_mode=mode)
                conn.execute("BEGIN IMMEDIATE")
                try:
                    self.version = schema.migrate(conn, self.store, tables=self.tables)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            finally:
                conn.close()
        log.debug("sqlite_opened", store=self.store, version=self.version)

    @classmethod
    def open(cls, attributes: SqliteStorageAttributes) -> SqliteStorage:
        """The component factory: the file named by the attributes, opened and migrated."""
        if attributes.path is not None:
            path = Path(attributes.path).expanduser().absolute()
        else:
            path = resolve_store_file(attributes.db_file, "$.db_file")
        return cls(
            path,
            busy_timeout=attributes.busy_timeout,
            synchronous=attributes.synchronous,
            pool_size=attributes.pool_size,
            tables=attributes.tables(),
        )

    def __repr__(self) -> str:
        return f"SqliteStorage({self.store!r})"

    def close(self) -> None:
        self._pool.close()

    # -- connections and transactions ---------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; each method says where its own
        # begin and end.
        conn = sqlite3.connect(
            self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA synchronous = {self._synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """sqlite3's failures to open or reach the file become `StorageUnavailableError`."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            # locked past the busy timeout, cannot open, disk I/O error, disk full, ...
            raise self._unavailable(exc) from None
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.IntegrityError | sqlite3.ProgrammingError):
                raise
            raise self._unavailable(exc) from None  # e.g. "file is not a database"

    def _unavailable(self, exc: Exception) -> StorageUnavailableError:
        return StorageUnavailableError(
            f"sqlite storage {self.store} is unavailable: {exc}",
            backend=self.backend,
            store=self.store,
            reason=str(exc),
        )

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        """A transaction opened with ``begin``: ``BEGIN IMMEDIATE`` for a write, which
        takes the write lock at once; ``BEGIN`` for a read snapshot, several queries seeing
        one state of the file. Committed when the block ends, rolled back if it fails."""
        with self._errors(), self._pool.connection() as conn:
            conn.execute(begin)
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # a failed COMMIT may leave it open
                    conn.execute("ROLLBACK")
                raise

    @contextmanager
    def _plain(self) -> Iterator[sqlite3.Connection]:
        with self._errors(), self._pool.connection() as conn:
            yield conn

    def execute(self, plan: Plan) -> dict[str, Any]:
        """Run one contract method's plan (see `ferrule_kit.stores.sql.store`)."""
        transaction: AbstractContextManager[sqlite3.Connection]
        if plan.mode == "write":
            transaction = self._transaction("BEGIN IMMEDIATE")
        elif plan.mode == "snapshot":
            transaction = self._transaction("BEGIN")
        else:
            transaction = self._plain()
        with transaction as conn:
            return run_blocking(plan.steps, conn)
