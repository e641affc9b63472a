"""What a SQL storage plan is made of (`ferrule_kit.stores.sql.store`): its statements (`Query`),
the transaction it needs (`Plan`), the SQL dialect it is written in (`SqlDialect`, `SQLITE`,
`POSTGRES`) and `planned`, which makes a generator method of queries return its plan. The
stores' tables' methods (`ferrule_kit.stores.sql.store`, `ferrule_kit.stores.sql.knowledge`) are written
with these."""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any, Literal, TypeVar

import attrs

__all__ = [
    "POSTGRES",
    "SQLITE",
    "Fetch",
    "Mode",
    "Plan",
    "Query",
    "SqlDialect",
    "Steps",
    "marks",
    "planned",
]

#: "write": one write transaction; "snapshot": queries that must see one state of the store
#: (a backend whose plain reads are consistent enough may run them without one); "plain":
#: no transaction.
Mode = Literal["write", "snapshot", "plain"]
Fetch = Literal["none", "one", "all", "rowcount"]


@attrs.frozen
class Query:
    """One statement of a plan, and what its plan is sent back: nothing, one row (or None),
    all rows, or the number of rows changed."""

    sql: str
    args: tuple[Any, ...] = ()
    fetch: Fetch = "none"


Steps = Generator[Query, Any, dict[str, Any]]


@attrs.frozen
class Plan:
    """A contract method's work: its queries (``steps``) and the transaction they need."""

    mode: Mode
    steps: Steps


@attrs.frozen
class SqlDialect:
    """What differs between the SQL databases `SqlStorage` runs on."""

    #: The driver's parameter marker (queries are written with ``?``).
    placeholder: str
    #: What locks a row read inside a write transaction until it commits (appended to the
    #: SELECT); empty where the write transaction holds the whole store already.
    lock_row: str
    #: The column type of a timestamp in seconds (a double; Postgres' REAL is a float4).
    float_type: str
    #: The column definition of a table's own increasing row id (the schema's ``runs.id``).
    serial_key: str

    def query(self, sql: str, args: Sequence[Any] = (), fetch: Fetch = "none") -> Query:
        """A `Query` of ``sql`` written with ``?`` parameters, in this dialect."""
        return Query(sql.replace("?", self.placeholder), tuple(args), fetch)


#: sqlite3: ``?`` parameters; ``BEGIN IMMEDIATE`` takes the file's write lock.
SQLITE = SqlDialect(
    placeholder="?", lock_row="", float_type="REAL", serial_key="INTEGER PRIMARY KEY"
)
#: psycopg: ``%s`` parameters; rows are locked one by one.
POSTGRES = SqlDialect(
    placeholder="%s",
    lock_row=" FOR UPDATE",
    float_type="double precision",
    serial_key="bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
)

_Input = TypeVar("_Input")


def planned(
    mode: Mode,
) -> Callable[[Callable[[Any, _Input], Steps]], Callable[[Any, _Input], Plan]]:
    """A decorator: a plan generator method returns its `Plan` (the steps with their ``mode``)."""

    def decorate(steps: Callable[[Any, _Input], Steps]) -> Callable[[Any, _Input], Plan]:
        def plan(self: Any, inputs: _Input) -> Plan:
            return Plan(mode, steps(self, inputs))

        plan.__name__ = plan.__qualname__ = steps.__name__
        plan.__doc__ = steps.__doc__
        return plan

    return decorate


def marks(values: Sequence[Any]) -> str:
    """``?, ?, ?``: one parameter marker per value."""
    return ", ".join("?" * len(values))
