"""What ``define("postgres_storage", name, attrs)`` takes."""

from __future__ import annotations

import attrs
from ferrule_kernel import in_range, local_only
from ferrule_kit.stores.sql.store import TableNames, table_name
from ferrule_kit.stores.sql.tables import schema_name

#: Where the host puts the connection string for components defined over the network.
DSN_ENV = "FERRULE_POSTGRES_DSN"


@attrs.frozen
class PostgresStorageAttributes:
    #: A libpq connection string or URL. It names a server to connect to and may name files
    #: (sslkey, passfile): accepted from code in this process only. Without it, the host's
    #: ``$FERRULE_POSTGRES_DSN`` is used. Never shown: not in reprs, logs or errors.
    dsn: str | None = attrs.field(
        default=None,
        repr=False,
        validator=local_only("a database server to connect to (and files its options name)"),
    )
    #: The PostgreSQL schema (namespace) holding the tables; created if missing.
    schema: str = attrs.field(default="ferrule", validator=schema_name)
    min_size: int = attrs.field(default=1, validator=in_range(0, 1000))
    max_size: int = attrs.field(default=10, validator=in_range(1, 1000))
    #: Seconds a call waits for a connection before the store counts as unavailable.
    timeout: float = attrs.field(default=10.0, validator=in_range(0.1, 3600.0))
    #: Seconds to wait for the server when connecting.
    connect_timeout: int = attrs.field(default=5, validator=in_range(1, 3600))
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
