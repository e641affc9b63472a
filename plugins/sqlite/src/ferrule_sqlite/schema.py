"""The schema's migrations on SQLite: the kit's (`ferrule_kit.stores.sql.schema`) run by sqlite3.

`migrate` runs in the one write transaction (``BEGIN IMMEDIATE``) that opens the store, so
a store is always at a version it has a row for, and a second process opening it at the
same time waits for the file's write lock and then finds nothing to do.
"""

from __future__ import annotations

import sqlite3

from ferrule_kit.stores.sql.schema import LATEST, SchemaMigration
from ferrule_kit.stores.sql.store import SQLITE, TableNames, run_blocking

__all__ = ["LATEST", "migrate"]


def migrate(
    conn: sqlite3.Connection,
    store: str,
    target: int = LATEST,
    tables: TableNames | None = None,
) -> int:
    """Bring the store (its ``tables``) to ``target`` inside the caller's write
    transaction; the version."""
    migration = SchemaMigration(
        SQLITE,
        backend="sqlite",
        package="ferrule-sqlite",
        store=store,
        target=target,
        tables=tables,
    )
    try:
        version: int = run_blocking(migration.steps(), conn)["version"]
    except sqlite3.OperationalError as exc:
        if migration.applying is None:
            raise
        # e.g. a "sessions" table of another program in the same file
        raise migration.failed(exc) from None
    return version
