"""Running a SQL storage plan (`ferrule_kit.stores.sql.store`: a generator of `Query` s, each sent
its result) on a connection: `run_blocking` on a DB-API one (sqlite3, psycopg), `run_async`
on an async one (psycopg's ``AsyncConnection``)."""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .plan import Fetch, Query

__all__ = ["run_async", "run_blocking"]

Steps = Generator["Query", Any, dict[str, Any]]


def run_blocking(steps: Steps, connection: Any) -> dict[str, Any]:
    """Run a plan's steps on a blocking DB-API connection with ``execute(sql, args)``
    returning a cursor (sqlite3, psycopg); the plan's result."""
    try:
        result: Any = None
        while True:
            query = steps.send(result)
            result = _fetch(connection.execute(query.sql, query.args), query.fetch)
    except StopIteration as done:
        value: dict[str, Any] = done.value
        return value
    finally:
        steps.close()


async def run_async(steps: Steps, connection: Any) -> dict[str, Any]:
    """`run_blocking` on an async connection (psycopg's ``AsyncConnection``)."""
    try:
        result: Any = None
        while True:
            query = steps.send(result)
            result = _fetch(await connection.execute(query.sql, query.args), query.fetch)
            if inspect.isawaitable(result):  # an async cursor's rows
                result = await result
    except StopIteration as done:
        value: dict[str, Any] = done.value
        return value
    finally:
        steps.close()


def _fetch(cursor: Any, fetch: Fetch) -> Any:
    """What a query's ``fetch`` asks of its executed cursor: its first row, all its rows
    (awaitables on an async cursor), the rows it changed, or nothing."""
    if fetch == "one":
        return cursor.fetchone()
    if fetch == "all":
        return cursor.fetchall()
    return cursor.rowcount if fetch == "rowcount" else None
