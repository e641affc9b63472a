"""Registers `chroma_vector_store` (alias `chromadb_vector_store`, Ailoy 0.1's name).
Imports nothing heavy: the chromadb client loads when a store is defined
(`ferrule_chroma.store`)."""

from __future__ import annotations

import attrs
from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kernel.trust import local_only
from ferrule_kit.vectorspec import VectorStoreAttributes, vector_store_type

COMPONENT_TYPE = "chroma_vector_store"
#: Where the host puts its Chroma server's URL for stores defined without ``url``.
URL_ENV = "FERRULE_CHROMA_URL"
DEFAULT_URL = "http://localhost:8000"


@attrs.frozen
class ChromaAttributes(VectorStoreAttributes):
    """What ``define`` takes: the server, and the collection (see `VectorStoreAttributes`;
    the collection is the Chroma collection's name)."""

    #: The Chroma server, ``http(s)://host:port``. It names a server to connect to:
    #: accepted from code in this process only. Without it, ``$FERRULE_CHROMA_URL``, else
    #: ``http://localhost:8000`` (where ``chroma run`` listens).
    url: str | None = attrs.field(
        default=None, validator=local_only("a Chroma server to connect to")
    )
    tenant: str = "default_tenant"
    database: str = "default_database"


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        vector_store_type(
            COMPONENT_TYPE,
            "ferrule_chroma.store:create",
            ChromaAttributes,
            aliases=("chromadb_vector_store",),
            description="Chunks in a collection of a Chroma server (HNSW search: cosine, "
            "inner product or L2) with ferrule's metadata filters.",
        )
    ]
