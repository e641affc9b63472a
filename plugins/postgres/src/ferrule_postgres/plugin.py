"""Registers the ``postgres_storage`` component type (imports nothing but the descriptions)."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import hookimpl
from ferrule_kit.stores.storagespec import storage_type


@hookimpl
def ferrule_register_component_types() -> list[Any]:
    return [
        storage_type(
            "postgres_storage",
            "ferrule_postgres.store:PostgresStorage.open",
            "ferrule_postgres.attributes:PostgresStorageAttributes",
            description="Sessions, runs and user memories in PostgreSQL, shared by many processes.",
        )
    ]
