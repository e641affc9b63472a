"""Running a SQL storage plan (`ferrule_kit.sqlstore`: a generator of `Query` s, each sent
its result) on a connection: `run_blocking` on a DB-API one (sqlite3, psycopg), `run_async`
on an async one (psycopg's ``AsyncConnection``)."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .sqlplan import Query

__all__ = ["run_async", "run_blocking"]

Steps = Generator["Query", Any, dict[str, Any]]


def run_blocking(steps: Steps, connection: Any) -> dict[str, Any]:
    """Run a plan's steps on a blocking DB-API connection with ``execute(sql, args)``
    returning a cursor (sqlite3, psycopg); the plan's result."""
    try:
        result: Any = None
        while True:
            query = steps.send(result)
            cursor = connection.execute(query.sql, query.args)
            if query.fetch == "one":
                result = cursor.fetchone()
            elif query.fetch == "all":
                result = cursor.fetchall()
            else:
                result = cursor.rowcount if query.fetch == "rowcount" else None
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
            cursor = await connection.execute(query.sql, query.args)
            if query.fetch == "one":
                result = await cursor.fetchone()
            elif query.fetch == "all":
                result = await cursor.fetchall()
            else:
                result = cursor.rowcount if query.fetch == "rowcount" else None
    except StopIteration as done:
        value: dict[str, Any] = done.value
        return value
    finally:
        steps.close()
