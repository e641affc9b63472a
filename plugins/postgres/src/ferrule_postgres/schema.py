"""The schema's migrations on PostgreSQL: the kit's (`ferrule_kit.stores.sql.schema`) run by psycopg.

The tables live in the component's PostgreSQL schema. `migrate` runs in one transaction
holding an advisory lock on the schema's name, so processes opening the store at once take
turns and the later ones find nothing to do.
"""

from __future__ import annotations

import psycopg
from ferrule_kit.stores.sql.schema import LATEST, SchemaMigration
from ferrule_kit.stores.sql.store import POSTGRES, TableNames, run_async

__all__ = ["LATEST", "migrate"]


async def migrate(
    conn: psycopg.AsyncConnection,
    s: str,
    store: str,
    target: int = LATEST,
    tables: TableNames | None = None,
) -> int:
    """Bring schema ``s`` (its ``tables``) to ``target`` in one transaction on ``conn``;
    the version."""
    migration = SchemaMigration(
        POSTGRES,
        backend="postgres",
        package="ferrule-postgres",
        store=store,
        where=f"{store} (schema {s})",
        prefix=f"{s}.",
        target=target,
        tables=tables,
    )
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"ferrule:{s}",))
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
        try:
            version: int = (await run_async(migration.steps(), conn))["version"]
        except psycopg.errors.DuplicateTable as exc:
            if migration.applying is None:
                raise
            raise migration.failed(exc) from None
    return version
