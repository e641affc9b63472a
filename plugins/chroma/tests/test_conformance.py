"""ferrule-chroma against the vector-store contract's conformance suite, on a real Chroma
server (`ferrule_chroma.testing.ChromaServer`)."""

from __future__ import annotations

from typing import Any

import pytest
from ferrule import AsyncRuntime
from ferrule_chroma.testing import ChromaServer
from ferrule_kit.testing.vectors import VectorStoreConformance, VectorStoreUnderTest


class TestChromaConformance(VectorStoreConformance):
    @pytest.fixture
    async def store(self, chroma_server: ChromaServer):
        database = chroma_server.new_database()  # one server per module, a database per test
        async with AsyncRuntime() as rt:

            async def make(collection: str, **attributes: Any) -> str:
                await rt.define(
                    "chroma_vector_store",
                    collection,
                    {
                        "url": chroma_server.url,
                        "database": database,
                        "collection": collection,
                        **attributes,
                    },
                )
                return collection

            # HNSW is approximate: the suite holds it to a recall bar, not exact order
            yield VectorStoreUnderTest(rt, make, keyword_search=False, exact=False)
