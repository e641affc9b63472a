"""The knowledge table of a SQL store: the storage contract's knowledge-content methods
(`ferrule_kit.stores.storage`: ``upsert_knowledge``, ``get_knowledge``, ``list_knowledge``,
``delete_knowledge``) as plans (`ferrule_kit.stores.sql.plan`), which `ferrule_kit.stores.sql.store`'s
`SqlStorage` inherits, and the table's definition (`create_knowledge_table`).

A knowledge base keeps one row per content it was given (a file, a URL, a text): what
`ferrule.knowledge.Knowledge` lists, and what tells how each ingestion went. The table is
made when the store opens, if missing (`ferrule_kit.stores.sql.schema`), under the name the store
was given (`TableNames.knowledge`), outside the versioned migrations of the sessions and
memories tables: two knowledge bases may keep their contents in two tables of one store.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from typing import Any

from ferrule_kit.stores.storage import KnowledgeRef, ListKnowledgeInput, UpsertKnowledgeInput

from .plan import Fetch, Query, SqlDialect, Steps, marks, planned
from .rows import dump_json
from .tables import TableNames

__all__ = ["KNOWLEDGE_COLUMNS", "KnowledgeContents", "create_knowledge_table"]

#: The table's columns, in the order of `ferrule_kit.stores.storage.KnowledgeContent`'s fields.
KNOWLEDGE_COLUMNS = (
    "id",
    "name",
    "description",
    "metadata",
    "type",
    "size",
    "linked_to",
    "access_count",
    "status",
    "status_message",
    "created_at",
    "updated_at",
    "external_id",
)


def create_knowledge_table(
    dialect: SqlDialect, tables: TableNames, prefix: str = ""
) -> Generator[Query, Any, None]:
    """The statements that make the knowledge table and its index when they are missing."""
    table = prefix + tables.knowledge_sql
    index = f'"{tables.knowledge}_by_linked_to"'
    yield dialect.query(
        f"""CREATE TABLE IF NOT EXISTS {table} (
            id TEXT PRIMARY KEY,
            name TEXT,
            description TEXT,
            metadata TEXT,
            type TEXT,
            size BIGINT,
            linked_to TEXT,
            access_count BIGINT,
            status TEXT,
            status_message TEXT,
            created_at BIGINT,
            updated_at BIGINT,
            external_id TEXT
        )"""
    )
    yield dialect.query(f"CREATE INDEX IF NOT EXISTS {index} ON {table} (linked_to, created_at)")


def knowledge_record(row: tuple[Any, ...]) -> dict[str, Any]:
    record = dict(zip(KNOWLEDGE_COLUMNS, row, strict=True))
    if record["metadata"] is not None:
        record["metadata"] = json.loads(record["metadata"])
    return record


class KnowledgeContents:
    """The knowledge-content methods of `ferrule_kit.stores.sql.store.SqlStorage` (its ``knowledge``
    table is the qualified name of `TableNames.knowledge`)."""

    dialect: SqlDialect
    knowledge: str

    def _query(self, sql: str, args: Sequence[Any] = (), fetch: Fetch = "none") -> Query:
        return self.dialect.query(sql, args, fetch)

    def _knowledge_row(self, content_id: str) -> Generator[Query, Any, dict[str, Any] | None]:
        columns = ", ".join(KNOWLEDGE_COLUMNS)
        row = yield self._query(
            f"SELECT {columns} FROM {self.knowledge} WHERE id = ?", (content_id,), "one"
        )
        return None if row is None else knowledge_record(row)

    @planned("write")
    def upsert_knowledge(self, inputs: UpsertKnowledgeInput) -> Steps:
        content = inputs.content
        values = [getattr(content, column) for column in KNOWLEDGE_COLUMNS]
        if content.metadata is not None:
            values[KNOWLEDGE_COLUMNS.index("metadata")] = dump_json(
                content.metadata, "$.content.metadata"
            )
        # A field left out (None) keeps what is stored, as Agno's knowledge tables do;
        # created_at is the first write's.
        kept = ", ".join(
            f"{c} = COALESCE({self.knowledge}.{c}, excluded.{c})"
            if c == "created_at"
            else f"{c} = COALESCE(excluded.{c}, {self.knowledge}.{c})"
            for c in KNOWLEDGE_COLUMNS[1:]
        )
        yield self._query(
            f"INSERT INTO {self.knowledge} ({', '.join(KNOWLEDGE_COLUMNS)}) "
            f"VALUES ({marks(values)}) ON CONFLICT (id) DO UPDATE SET {kept}",
            values,
        )
        return {"content": (yield from self._knowledge_row(content.id))}

    @planned("plain")
    def get_knowledge(self, inputs: KnowledgeRef) -> Steps:
        return {"content": (yield from self._knowledge_row(inputs.id))}

    @planned("snapshot")
    def list_knowledge(self, inputs: ListKnowledgeInput) -> Steps:
        where = ""
        args: list[Any] = []
        if inputs.linked_to is not None:
            where, args = " WHERE linked_to = ?", [inputs.linked_to]
        row = yield self._query(f"SELECT count(*) FROM {self.knowledge}{where}", args, "one")
        total = int(row[0]) if row else 0
        if inputs.sort_by is None:
            order = "created_at, id"
        else:
            direction = "ASC" if inputs.sort_order == "asc" else "DESC"
            order = f"{inputs.sort_by} {direction}, id"
        sql = f"SELECT {', '.join(KNOWLEDGE_COLUMNS)} FROM {self.knowledge}{where} ORDER BY {order}"
        if inputs.limit is not None:
            sql += " LIMIT ? OFFSET ?"
            args += [inputs.limit, ((inputs.page or 1) - 1) * inputs.limit]
        rows = yield self._query(sql, args, "all")
        return {"contents": [knowledge_record(r) for r in rows], "total": total}

    @planned("write")
    def delete_knowledge(self, inputs: KnowledgeRef) -> Steps:
        deleted = yield self._query(
            f"DELETE FROM {self.knowledge} WHERE id = ?", (inputs.id,), "rowcount"
        )
        return {"deleted": deleted}
