"""Registers `sqlite_vec_store` (alias `local_vector_store`). Imports nothing heavy: apsw
and sqlite-vec load when a store is defined (`ferrule_sqlite_vec.store`)."""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kit.embeddings.vectorspec import vector_store_type

COMPONENT_TYPE = "sqlite_vec_store"


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        vector_store_type(
            COMPONENT_TYPE,
            "ferrule_sqlite_vec.store:create",
            "ferrule_sqlite_vec.attributes:SqliteVecAttributes",
            aliases=("local_vector_store",),
            description="Chunks and vectors in one SQLite file: exact search with "
            "sqlite-vec, FTS5 keyword search, JSON metadata filters.",
        )
    ]
