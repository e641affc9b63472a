"""Registers the ``sqlite_storage`` component type (imports nothing but the descriptions)."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import hookimpl
from ferrule_kit.stores.storagespec import storage_type


@hookimpl
def ferrule_register_component_types() -> list[Any]:
    return [
        storage_type(
            "sqlite_storage",
            "ferrule_sqlite.store:SqliteStorage.open",
            "ferrule_sqlite.attributes:SqliteStorageAttributes",
            description="Sessions, runs and user memories in a SQLite file (the embedded default).",
        )
    ]
