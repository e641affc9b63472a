"""ferrule-faiss against the vector-store contract's conformance suite."""

from __future__ import annotations

from typing import Any

import pytest
from ferrule import AsyncRuntime
from ferrule_kit.testing.vectors import VectorStoreConformance, VectorStoreUnderTest


class TestFaissConformance(VectorStoreConformance):
    @pytest.fixture
    async def store(self):
        async with AsyncRuntime() as rt:

            async def make(collection: str, **attributes: Any) -> str:
                await rt.define("faiss_store", collection, {"collection": collection, **attributes})
                return collection

            yield VectorStoreUnderTest(rt, make, keyword_search=False, exact=True)
