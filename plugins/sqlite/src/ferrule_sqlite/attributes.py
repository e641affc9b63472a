"""What ``define("sqlite_storage", name, attrs)`` takes."""

from __future__ import annotations

from typing import Literal

import attrs
from ferrule_kernel import in_range
from ferrule_kit.network.paths import server_path
from ferrule_kit.stores.sql.store import TableNames, table_name
from ferrule_kit.stores.storage import store_file


@attrs.frozen
class SqliteStorageAttributes:
    #: The database file, relative to the host's storage directory (``$FERRULE_STORAGE_DIR``,
    #: default ``~/.local/share/ferrule``); any caller may name one.
    db_file: str = attrs.field(default="ferrule.db", validator=store_file)
    #: A path on this machine instead of ``db_file``: any path from code in this process; from
    #: a network client only under the directories of ``$FERRULE_REMOTE_PATHS``
    #: (`ferrule_kit.network.paths`).
    path: str | None = attrs.field(default=None, validator=server_path)
    #: Seconds a write waits for another connection's (or process's) transaction.
    busy_timeout: float = attrs.field(default=30.0, validator=in_range(0.0, 3600.0))
    #: "full": a committed run survives a power cut; "normal": it survives a crash of this
    #: process but may be lost with the machine (WAL mode), for faster commits.
    synchronous: Literal["full", "normal"] = "full"
    #: Connections kept open (readers run in parallel; writers take turns).
    pool_size: int = attrs.field(default=4, validator=in_range(1, 64))
    #: The tables' names (Agno's ``session_table`` / ``memory_table`` /
    #: ``knowledge_table``): sessions (their runs in ``<session_table>_runs``), user
    #: memories and knowledge contents (`ferrule_kit.stores.sql.store.TableNames`).
    session_table: str = attrs.field(default="sessions", validator=table_name)
    memory_table: str = attrs.field(default="memories", validator=table_name)
    knowledge_table: str = attrs.field(default="knowledge", validator=table_name)

    def tables(self) -> TableNames:
        return TableNames(
            sessions=self.session_table,
            memories=self.memory_table,
            knowledge=self.knowledge_table,
        )
