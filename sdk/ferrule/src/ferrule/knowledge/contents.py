"""A knowledge base's contents in its ``contents_db`` (`KnowledgeContents`, which
`Knowledge` is): a row per content it was given, written as each ingestion goes
(``processing`` once read, then ``completed``, or ``failed`` with why), listed as Agno's
`Content` (`get_content`, `get_content_by_id`, `get_content_status`), changed
(`patch_content`), and the metadata keys they hold (`get_valid_filters`,
`validate_filters`, what an agent's model may filter on).

The rows are the store's knowledge table (`ferrule.db.base.BaseDb.upsert_knowledge_content`;
``SqliteDb(knowledge_table=...)`` names it), each ``linked_to`` the knowledge base's
``name``: several knowledge bases may share one store, each listing its own. A content's id
is its document's (``file:<path>``, ``url:<url>``, ``text:<name>``), the ``content_id`` of
the chunks a search finds, what `Knowledge.remove_content_by_id` takes. Without a
``contents_db`` nothing is recorded, and listing is refused, naming ``contents_db``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from pathlib import Path
from typing import Any

from ferrule_kernel import InvalidInputError

from .._bridge import Bridge, blocking, on_bridge_loop
from ..filters import FilterExpr
from .content import Content, ContentStatus
from .document import ReadFailure
from .readers import Source, file_document_id

__all__ = ["KnowledgeContents", "check_contents_db"]

#: What a contents_db is asked (Agno's BaseDb's knowledge-content methods).
CONTENT_METHODS = (
    "get_knowledge_content",
    "get_knowledge_contents",
    "upsert_knowledge_content",
    "delete_knowledge_content",
)
#: Metadata keys of ferrule's own on every chunk, never a user's filter.
OWN_KEYS = frozenset({"name", "chunk", "description", "linked_to"})


def check_contents_db(contents_db: Any) -> Any:
    """``contents_db`` when it is a db of `ferrule.db` (or None), else `InvalidInputError`."""
    if contents_db is None:
        return None
    # known by its methods (ferrule.db's dbs have them all): the knowledge package
    # imports nothing of ferrule.db's, which reaches the agent's sessions
    if not all(callable(getattr(contents_db, method, None)) for method in CONTENT_METHODS):
        raise InvalidInputError(
            "contents_db must be a db of ferrule.db (SqliteDb, PostgresDb, InMemoryDb, "
            f"AsyncSqliteDb, AsyncPostgresDb), got {type(contents_db).__name__}",
            field="contents_db",
        )
    return contents_db


def content_of(row: Any) -> Content:
    """A stored row (`ferrule.db.schemas.KnowledgeRow`) as Agno's `Content`."""
    return Content(
        id=row.id,
        name=row.name,
        description=row.description,
        metadata=row.metadata,
        file_type=row.type,
        size=row.size,
        status=status_of(row.status),
        status_message=row.status_message,
        created_at=row.created_at,
        updated_at=row.updated_at or row.created_at,
        external_id=row.external_id,
    )


def status_of(value: Any) -> ContentStatus | None:
    if value is None:
        return None
    text = str(getattr(value, "value", value)).lower()
    for status in ContentStatus:
        if status.value in text:
            return status
    return ContentStatus.PROCESSING


def filter_keys(filters: Any) -> list[str | None]:
    """The metadata key of each top-level filter (None for AND / OR / NOT)."""
    if isinstance(filters, dict):
        return list(filters)
    return [getattr(item, "key", None) for item in filters]


class KnowledgeContents:
    """`Knowledge`'s contents in its ``contents_db`` (see the module docstring)."""

    name: str | None
    contents_db: Any
    known_filter_keys: set[str]

    @property
    def sync_bridge(self) -> Bridge:
        raise NotImplementedError

    # -- the db, sync or async -------------------------------------------------------------

    async def _db(self, method: str, *args: Any) -> Any:
        """The contents db's ``method``, awaited (a sync db's in a worker thread)."""
        db = self.contents_db
        if db is None:
            raise InvalidInputError(
                "this knowledge base keeps no list of its contents: give it a contents_db "
                "(Knowledge(contents_db=SqliteDb(db_file=...)))",
                field="contents_db",
            )
        if inspect.iscoroutinefunction(getattr(db, method)):  # AsyncSqliteDb...
            return await getattr(db, method)(*args)
        return await asyncio.to_thread(getattr(db, method), *args)

    async def _write_row(
        self,
        content_id: str,
        status: ContentStatus,
        message: str = "",
        source: Source | None = None,
        **fields: Any,
    ) -> None:
        from ..db.schemas.knowledge import KnowledgeRow

        now = int(time.time())
        if source is not None:
            user = {k: v for k, v in source.metadata.items() if k not in OWN_KEYS}
            description = source.metadata.get("description")
            fields = {
                "name": source.name,
                "description": description if isinstance(description, str) else "",
                "metadata": user,
                "type": source.type,
                "size": source.size,
                **fields,
            }
        row = KnowledgeRow(
            id=content_id,
            name=fields.pop("name", None) or "",
            description=fields.pop("description", None) or "",
            linked_to=self.name or "",
            access_count=0,
            status=status.value,
            status_message=message,
            created_at=now,
            updated_at=now,
            **fields,
        )
        await self._db("upsert_knowledge_content", row)

    async def _rows_read(self, sources: list[Source], skipped: list[str], failed: Any) -> None:
        """Rows for what was read: ``processing``; files that failed or were skipped
        unread: ``failed``, saying why."""
        if self.contents_db is None:
            return
        for source in sources:
            await self._write_row(source.document_id, ContentStatus.PROCESSING, source=source)
            self.known_filter_keys.update(k for k in source.metadata if k not in OWN_KEYS)
        failures: list[ReadFailure] = list(failed)
        for path in skipped:
            why = f"{path} is neither a PDF nor UTF-8 text: not read"
            failures.append(ReadFailure(path, "unreadable", why))
        for failure in failures:
            failed_file = Path(failure.source)
            await self._write_row(
                file_document_id(failed_file),
                ContentStatus.FAILED,
                failure.message,
                name=failed_file.name,
                type=failed_file.suffix.lower() or None,
            )

    async def _set_status(self, content_id: str, status: ContentStatus, message: str) -> None:
        """A listed content's status changed (its other fields as stored)."""
        row = await self._db("get_knowledge_content", content_id)
        if row is None:
            await self._write_row(content_id, status, message)
            return
        row.status, row.status_message = status.value, message
        row.updated_at = int(time.time())
        await self._db("upsert_knowledge_content", row)

    async def _rows_done(
        self, sources: list[Source], stored: set[str], error: BaseException | None
    ) -> None:
        """Each read content ``completed`` (stored, or stored unchanged already), or
        ``failed``: nothing to read in it, or the ``error`` that stopped the insertion."""
        if self.contents_db is None:
            return
        for source in sources:
            if not source.text.strip() and not source.pieces:
                message = "no text to read in it (a scanned PDF, an empty file)"
                await self._set_status(source.document_id, ContentStatus.FAILED, message)
            elif source.document_id in stored:
                await self._set_status(source.document_id, ContentStatus.COMPLETED, "")
            else:
                message = f"not stored: {type(error).__name__}: {error}"
                await self._set_status(source.document_id, ContentStatus.FAILED, message)

    # -- listing -------------------------------------------------------------------------

    @on_bridge_loop
    async def aget_content(
        self,
        limit: int | None = None,
        page: int | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
    ) -> tuple[list[Content], int]:
        """This knowledge base's contents (``limit`` per ``page``, sorted by ``sort_by``:
        ``sort_order`` ``"asc"``, else descending), and how many there are in all."""
        rows, total = await self._db(
            "get_knowledge_contents", limit, page, sort_by, sort_order, self.name
        )
        return [content_of(row) for row in rows], total

    get_content = blocking(aget_content)

    @on_bridge_loop
    async def aget_content_by_id(self, content_id: str) -> Content | None:
        """One content, or None."""
        row = await self._db("get_knowledge_content", content_id)
        return None if row is None else content_of(row)

    get_content_by_id = blocking(aget_content_by_id)

    @on_bridge_loop
    async def aget_content_status(self, content_id: str) -> tuple[ContentStatus | None, str | None]:
        """Where a content's ingestion stands, and its message (``(None, "Content not
        found")`` for a content not listed)."""
        row = await self._db("get_knowledge_content", content_id)
        if row is None:
            return None, "Content not found"
        return status_of(row.status), row.status_message

    get_content_status = blocking(aget_content_status)

    @on_bridge_loop
    async def apatch_content(self, content: Content) -> dict[str, Any] | None:
        """Change a listed content: its name, description and status as given, its
        metadata merged into what it has (and into its chunks', so that searches filter
        on it); the row as a dict, or None when not listed."""
        if not isinstance(content, Content):
            raise InvalidInputError(
                f"expected a Content, got {type(content).__name__}", field="content"
            )
        if not content.id:
            raise InvalidInputError("the content to change needs its id", field="content.id")
        row = await self._db("get_knowledge_content", content.id)
        if row is None:
            return None
        if content.metadata is not None:
            row.metadata = {**(row.metadata or {}), **content.metadata}
            await self._restamp(content.id, content.metadata)
        for field in ("name", "description", "status_message", "external_id"):
            if getattr(content, field) is not None:
                setattr(row, field, getattr(content, field))
        if content.status is not None:
            row.status = ContentStatus(content.status).value
        row.updated_at = int(time.time())
        written = await self._db("upsert_knowledge_content", row)
        result: dict[str, Any] = (written or row).to_dict()
        return result

    patch_content = blocking(apatch_content)

    async def _restamp(self, content_id: str, metadata: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- filters -------------------------------------------------------------------------

    @on_bridge_loop
    async def aget_valid_filters(self) -> set[str]:
        """The metadata keys of this knowledge base's contents (none without a
        contents_db)."""
        if self.contents_db is None:
            return set()
        contents, _ = await self.aget_content()
        self.known_filter_keys = {key for c in contents for key in (c.metadata or {})}
        return set(self.known_filter_keys)

    _get_valid_filters = blocking(aget_valid_filters)

    def get_valid_filters(self) -> set[str]:
        """`aget_valid_filters`, waited for."""
        if self.contents_db is None:  # nothing to wait for
            return set()
        return self._get_valid_filters()

    @on_bridge_loop
    async def avalidate_filters(
        self, filters: Any
    ) -> tuple[dict[str, Any] | list[FilterExpr], list[str]]:
        """``filters`` (a dict, or a list of filter expressions) kept to the keys of
        `get_valid_filters`, and the keys that are not (with no contents_db, all kept)."""
        if self.contents_db is None:
            return filters, []
        if not filters:
            return {}, []
        valid = await self.aget_valid_filters()

        def known(key: str) -> bool:
            return key in valid or key.split(".")[-1] in valid

        keys = filter_keys(filters)
        if not valid:
            # nothing listed yet: a dict's keys are unknown; expressions cannot be checked
            return ({}, [k for k in keys if k]) if isinstance(filters, dict) else (filters, [])
        invalid = [k for k in keys if k is not None and not known(k)]
        if isinstance(filters, dict):
            return {k: v for k, v in filters.items() if known(k)}, invalid
        kept = [f for f, k in zip(filters, keys, strict=True) if k is None or known(k)]
        return kept, invalid

    validate_filters = blocking(avalidate_filters)
