"""Registers `pgvector_store`. Imports nothing heavy: psycopg loads when a store is
defined (`ferrule_pgvector.store`)."""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs
from ferrule_kernel import ComponentTypeSpec, InvalidInputError, hookimpl, in_range
from ferrule_kernel.trust import local_only
from ferrule_kit.embeddings.vectorspec import VectorStoreAttributes, vector_store_type
from ferrule_kit.stores.sql.tables import schema_name

COMPONENT_TYPE = "pgvector_store"
#: Where the host puts the connection string for stores defined over the network (the
#: same variable as ferrule-postgres's storage: one database can hold both).
DSN_ENV = "FERRULE_POSTGRES_DSN"


_MEMORY = re.compile(r"[1-9][0-9]{0,6}(kB|MB|GB|TB)")


def _memory(_instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not _MEMORY.fullmatch(value):
        raise InvalidInputError(
            "must be a PostgreSQL memory size: a number and kB, MB, GB or TB ('2GB')",
            field=attribute.name,
        )


@attrs.frozen
class PgVectorAttributes(VectorStoreAttributes):
    """What ``define`` takes: where the database is, and the collection (see
    `VectorStoreAttributes`)."""

    #: A libpq connection string or URL. It names a server to connect to (and may name
    #: files): accepted from code in this process only. Without it, the host's
    #: ``$FERRULE_POSTGRES_DSN``. Never shown: not in reprs, logs or errors.
    dsn: str | None = attrs.field(
        default=None,
        repr=False,
        validator=local_only("a database server to connect to (and files its options name)"),
    )
    #: The PostgreSQL schema holding the collections; created if missing.
    schema: str = attrs.field(default="ferrule", validator=schema_name)
    #: ``hnsw``: pgvector's approximate index (fast at millions of chunks; filtered
    #: searches use its iterative scan, so a selective filter still fills ``top_k``);
    #: ``none``: exact search by scanning. Collections over 2,000 dimensions are scanned.
    index: Literal["hnsw", "none"] = "hnsw"
    #: Candidates the HNSW search keeps (``hnsw.ef_search``; at least ``top_k`` is used).
    ef_search: int = attrs.field(default=100, validator=in_range(1, 1000))
    #: The HNSW index's links per node (``m``) and build-time candidates
    #: (``ef_construction``, at least twice ``m``), pgvector's defaults; they shape the
    #: index when the collection is made (an existing one keeps its index).
    hnsw_m: int = attrs.field(default=16, validator=in_range(2, 100))
    hnsw_ef_construction: int = attrs.field(default=64, validator=in_range(4, 1000))
    #: Memory PostgreSQL may use to build the index (``maintenance_work_mem``: ``"2GB"``,
    #: ``"512MB"``); None: the server's setting.
    maintenance_work_mem: str | None = attrs.field(default=None, validator=_memory)
    min_size: int = attrs.field(default=1, validator=in_range(0, 1000))
    max_size: int = attrs.field(default=10, validator=in_range(1, 1000))
    #: Seconds a call waits for a free connection before the store counts as unavailable.
    timeout: float = attrs.field(default=10.0, validator=in_range(0.1, 3600.0))
    connect_timeout: int = attrs.field(default=5, validator=in_range(1, 3600))


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        vector_store_type(
            COMPONENT_TYPE,
            "ferrule_pgvector.store:create",
            PgVectorAttributes,
            description="Chunks and vectors in PostgreSQL with pgvector: HNSW search, "
            "full-text search, JSONB metadata filters.",
        )
    ]
