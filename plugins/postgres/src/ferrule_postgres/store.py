"""`PostgresStorage`: the storage contract (`ferrule_kit.stores.storage`) in PostgreSQL.

The contract's logic is the kit's (`ferrule_kit.stores.sql.store`); this module connects, migrates
the schema and runs each method's plan on psycopg's async connection pool: the methods are
coroutines on the caller's event loop, waiting on the network without holding a thread.
Every write is one transaction; `append_run` first locks its session's row (creating it if
new), so writers of one session take turns, in any number of processes, and a run lands
whole with its session's update or not at all. A client killed mid-transaction leaves
nothing: the server rolls back what it had not committed.

The connection string may hold a password: it is kept out of reprs, logs and errors
(`store` names the server as ``host:port/dbname``, and error texts are scrubbed).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import psycopg_pool
from ferrule_kernel import get_logger, scrub_secrets
from ferrule_kit.errors import StorageConflictError, StorageUnavailableError
from ferrule_kit.stores.dburls import postgres_dsn
from ferrule_kit.stores.sql.store import (
    POSTGRES,
    AsyncSqlBackend,
    Plan,
    SqlStorage,
    TableNames,
    run_async,
)

from . import schema
from .attributes import DSN_ENV, PostgresStorageAttributes

log = get_logger("ferrule.postgres")


@asynccontextmanager
async def _errors(store: str, secrets: list[str]) -> AsyncIterator[None]:
    """psycopg's failures become the contract's typed errors, naming ``store``."""
    try:
        yield
    except psycopg.errors.UniqueViolation as exc:
        # two writers raced to store one run_id in different sessions
        raise StorageConflictError(
            scrub_secrets(f"conflicting write: {exc.diag.message_detail or exc}", secrets),
            backend="postgres",
            store=store,
        ) from None
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        # refused, timed out, server shut down, no connection free in time (PoolTimeout)
        reason = scrub_secrets(str(exc).strip() or type(exc).__name__, secrets)
        raise StorageUnavailableError(
            f"postgres storage {store} is unavailable: {reason}",
            backend="postgres",
            store=store,
            reason=reason,
        ) from None


class PostgresStorage(AsyncSqlBackend):
    """A storage component on a PostgreSQL schema (see the module docstring)."""

    backend = "postgres"

    def __init__(
        self,
        pool: psycopg_pool.AsyncConnectionPool,
        schema_name: str,
        store: str,
        secrets: list[str],
        tables: TableNames | None = None,
    ) -> None:
        self._pool = pool
        self.schema = schema_name
        self.store = store
        self._secrets = secrets
        self.sql = SqlStorage(
            POSTGRES,
            backend=self.backend,
            store=store,
            latest=schema.LATEST,
            prefix=f"{schema_name}.",
            tables=tables,
        )

    @classmethod
    async def open(cls, attributes: PostgresStorageAttributes) -> PostgresStorage:
        """The component factory: connect, migrate the schema, open the pool."""
        dsn, store, secrets = postgres_dsn(attributes.dsn, DSN_ENV)
        connect: dict[str, Any] = {
            "connect_timeout": attributes.connect_timeout,
            "autocommit": True,
        }
        async with _errors(store, secrets):
            conn = await psycopg.AsyncConnection.connect(dsn, **connect)
            async with conn:
                version = await schema.migrate(
                    conn, attributes.schema, store, tables=attributes.tables()
                )
            pool = psycopg_pool.AsyncConnectionPool(
                dsn,
                min_size=attributes.min_size,
                max_size=attributes.max_size,
                timeout=attributes.timeout,
                kwargs=connect,
                # a connection broken by a server restart is replaced, not handed out
                check=psycopg_pool.AsyncConnectionPool.check_connection,
                name=f"ferrule-postgres {store}",
                open=False,
            )
            await pool.open()
        log.debug("postgres_opened", store=store, schema=attributes.schema, version=version)
        return cls(pool, attributes.schema, store, secrets, attributes.tables())

    def __repr__(self) -> str:
        return f"PostgresStorage({self.store!r}, schema={self.schema!r})"

    async def close(self) -> None:
        await self._pool.close()

    # -- errors, connections and transactions ---------------------------------------------

    async def execute(self, plan: Plan) -> dict[str, Any]:
        """Run one contract method's plan (see `ferrule_kit.stores.sql.store`). A snapshot needs no
        transaction here: under READ COMMITTED one would not make several reads one
        snapshot, and it costs two round trips; the kit's plans are written for that."""
        async with _errors(self.store, self._secrets), self._pool.connection() as conn:
            if plan.mode == "write":
                async with conn.transaction():
                    return await run_async(plan.steps, conn)
            return await run_async(plan.steps, conn)
