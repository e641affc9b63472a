"""Registers `faiss_store` (alias `faiss`), with the contract's methods.
Imports nothing heavy: faiss and numpy load when a store is defined (`ferrule_faiss.store`)."""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kit.embeddings.vectorspec import vector_store_type

COMPONENT_TYPE = "faiss_store"


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        vector_store_type(
            COMPONENT_TYPE,
            "ferrule_faiss.store:create",
            "ferrule_kit.embeddings.vectorspec:VectorStoreAttributes",
            aliases=("faiss",),
            description="Chunks in memory, vectors in a FAISS flat index (exact cosine, "
            "inner-product or L2 search) with ferrule's metadata filters; lives as long "
            "as the component.",
        )
    ]
