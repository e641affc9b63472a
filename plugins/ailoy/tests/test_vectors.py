"""``faiss_vector_store`` on ferrule-faiss's ``faiss_store``: the suite of Ailoy's store
methods, and the component underneath it (defined with it, deleted with it)."""

from __future__ import annotations

import pytest
from ferrule import AsyncRuntime
from ferrule_ailoy.testing import StoreUnderTest, VectorStoreSuite
from ferrule_kernel import InvalidInputError, UnknownComponentError


class TestFaiss(VectorStoreSuite):
    @pytest.fixture
    async def store(self):
        async with AsyncRuntime() as rt:

            async def make(name: str, dimension: int) -> str:
                await rt.define("faiss_vector_store", name, {"dimension": dimension})
                return name

            yield StoreUnderTest(rt, make)


async def test_the_ferrule_store_underneath_lives_and_dies_with_it() -> None:
    async with AsyncRuntime() as rt:
        await rt.define("faiss_vector_store", "vs0", {"dimension": 3})
        assert rt.kernel.components() == {"vs0": "faiss_vector_store", "vs0/store": "faiss_store"}
        info = await rt.call_method("vs0/store", "info", {})
        assert (info["dimension"], info["distance"]) == (3, "cosine")
        with pytest.raises(InvalidInputError, match="part of 'vs0'") as refused:
            await rt.delete("vs0/store")
        assert [e["path"] for e in refused.value.errors] == ["name"]
        await rt.delete("vs0")
        assert rt.kernel.components() == {}
        with pytest.raises(UnknownComponentError):
            await rt.call_method("vs0/store", "count", {})


async def test_ailoy_s_attributes_are_required_and_named() -> None:
    async with AsyncRuntime() as rt:
        for attributes, path in [({}, "$.dimension"), ({"dimension": 0}, "$.dimension")]:
            with pytest.raises(InvalidInputError) as refused:
                await rt.define("faiss_vector_store", "vs0", attributes)
            assert [e["path"] for e in refused.value.errors] == [path]
        with pytest.raises(InvalidInputError) as extra:
            await rt.define("faiss_vector_store", "vs0", {"dimension": 3, "distance": "l2"})
        assert [e["path"] for e in extra.value.errors] == ["$.distance"]
        assert rt.kernel.components() == {}
