"""Agno's ``agno.context.database.provider``: `DatabaseContextProvider`, refused: it takes
SQLAlchemy engines, and ferrule uses no SQLAlchemy. Give an agent SQL access with tools of
your own over your database driver (a `ferrule.tools.Toolkit`), with a read-only connection
for questions."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import InvalidInputError

from ..mode import ContextMode
from ..provider import ContextProvider

__all__ = [
    "DEFAULT_READ_INSTRUCTIONS",
    "DEFAULT_WRITE_INSTRUCTIONS",
    "NO_SQLALCHEMY",
    "DatabaseContextProvider",
]

NO_SQLALCHEMY = (
    "DatabaseContextProvider takes SQLAlchemy engines, and ferrule uses no SQLAlchemy: give "
    "the agent a Toolkit of your own over your database driver (a read-only connection for "
    "questions)"
)
DEFAULT_READ_INSTRUCTIONS = (
    "You answer questions from a SQL database with read-only queries: look at the tables and "
    "their columns first, then query only what the question needs, and say which tables the "
    "answer comes from."
)
DEFAULT_WRITE_INSTRUCTIONS = (
    "You change a SQL database as instructed: look at the tables first, change only what the "
    "instruction names, in as few statements as it takes, and report what changed."
)


class DatabaseContextProvider(ContextProvider):
    """Refused (see the module docstring): constructing one names the ferrule way."""

    def __init__(
        self,
        *,
        id: str = "database",
        name: str | None = None,
        sql_engine: Any,
        readonly_engine: Any,
        schema: str | None = None,
        read_instructions: str | None = None,
        write_instructions: str | None = None,
        mode: ContextMode = ContextMode.default,
        model: Any = None,
        read: bool = True,
        write: bool = True,
        stream_sub_agent_events: bool = True,
    ) -> None:
        raise InvalidInputError(NO_SQLALCHEMY, field="sql_engine")

    def query(self, question: str, *, run_context: Any = None) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="sql_engine")

    async def aquery(self, question: str, *, run_context: Any = None) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="sql_engine")

    def status(self) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="sql_engine")

    async def astatus(self) -> Any:
        raise InvalidInputError(NO_SQLALCHEMY, field="sql_engine")
