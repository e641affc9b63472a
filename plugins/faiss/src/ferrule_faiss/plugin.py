"""Registers `faiss_vector_store` (alias `faiss`, the name Ailoy's ``VectorStore`` uses),
with the contract's methods and Ailoy 0.1's (``insert_many``, ``get_by_id``, ``retrieve``,
``remove``, ``clear``: `ferrule_kit.ailoy_vectors`) on the same store.
Imports nothing heavy: faiss and numpy load when a store is defined (`ferrule_faiss.store`)."""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kit.vectorspec import vector_store_type

COMPONENT_TYPE = "faiss_vector_store"


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        vector_store_type(
            COMPONENT_TYPE,
            "ferrule_faiss.store:create",
            "ferrule_kit.vectorspec:VectorStoreAttributes",
            aliases=("faiss",),
            ailoy_v0_1=True,
            description="Chunks in memory, vectors in a FAISS flat index (exact cosine, "
            "inner-product or L2 search) with ferrule's metadata filters; lives as long "
            "as the component.",
        )
    ]
