"""The tables of one SQL store (`TableNames`): the names a program gives them (Agno's
``session_table`` / ``memory_table``), checked (`table_name`), quoted in SQL when not the
defaults, with the store's schema versions in a table of their own; and the schema a
PostgreSQL store keeps them in (`schema_name`). `ferrule_kit.stores.sql.store`
and `ferrule_kit.stores.sql.schema` build their statements with them."""

from __future__ import annotations

import re
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

__all__ = ["SCHEMA_NAME", "TABLE_NAME", "TableNames", "schema_name", "table_name"]

#: A table name a store may be given: a lower-case SQL identifier, short enough that the
#: names made from it (``<name>_runs``, ``<name>_by_user``) stay within Postgres's 63.
TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,39}")


def table_name(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    """An attrs validator: ``value`` is a table name a store may be given (`TABLE_NAME`)."""
    _check_identifier(TABLE_NAME, 40, attribute, value)


#: A schema (namespace) a PostgreSQL store may be given: a lower-case SQL identifier within
#: Postgres's 63 characters.
SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def schema_name(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    """An attrs validator: ``value`` is a schema name a store may be given (`SCHEMA_NAME`)."""
    _check_identifier(SCHEMA_NAME, 63, attribute, value)


def _check_identifier(
    pattern: re.Pattern[str], most: int, attribute: attrs.Attribute[Any], value: str
) -> None:
    if not pattern.fullmatch(value):
        raise InvalidInputError(
            f"must be a lower-case SQL identifier: letters, digits and '_', {most} at most",
            field=attribute.name,
        )


@attrs.frozen
class TableNames:
    """The tables of one store: its sessions (their runs in ``<sessions>_runs``, or
    ``runs`` beside the default ``sessions``), its user memories and its knowledge
    contents. Names other than the defaults are quoted in SQL (a reserved word is a name
    too), and the store's schema versions are kept in a table of their own (`schema`), so
    two sets of tables can share one database. Sets may share a memories table (agents with
    sessions of their own and one user's memories): it is made when missing. The knowledge
    table is no part of that set's versions: it is made when missing, whatever its name
    (`knowledge_sql`)."""

    sessions: str = attrs.field(default="sessions", validator=table_name)
    memories: str = attrs.field(default="memories", validator=table_name)
    knowledge: str = attrs.field(default="knowledge", validator=table_name)

    @property
    def is_default(self) -> bool:
        return (self.sessions, self.memories) == ("sessions", "memories")

    @property
    def runs(self) -> str:
        return "runs" if self.sessions == "sessions" else f"{self.sessions}_runs"

    @property
    def schema(self) -> str:
        """The table of the store's schema versions."""
        if self.is_default:
            return "ferrule_schema"
        return f"ferrule_schema_{self.sessions}_{self.memories}"[:63]

    @property
    def knowledge_sql(self) -> str:
        """The knowledge table's name in SQL (quoted unless the default)."""
        return self.knowledge if self.knowledge == "knowledge" else f'"{self.knowledge}"'

    def sql(self, name: str) -> str:
        """``name`` (a table, or an index made from one) as SQL: a default as released,
        any other quoted."""
        return name if self.is_default else f'"{name}"'
