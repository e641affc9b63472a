"""``tvm_embedding_model`` on ferrule-minilm's local embedder: Ailoy's ``infer`` at the
width of the model its id names, and its refusals."""

from __future__ import annotations

import math

import pytest
from ferrule import AsyncRuntime
from ferrule_kernel import InvalidInputError


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_an_aliased_bge_m3_answers_at_its_own_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FERRULE_MODEL_ALIASES", "BAAI/bge-m3=all-MiniLM-L6-v2")
    async with AsyncRuntime() as rt:
        await rt.define("tvm_embedding_model", "em0", {})  # Ailoy's default model: bge-m3
        assert rt.kernel.components()["em0/embedder"] == "minilm_embedder"
        one = (await rt.call_method("em0", "infer", {"prompt": "What is BGE-M3?"}))["embedding"]
        assert len(one) == 1024
        assert any(one[:384]) and not any(one[384:])  # MiniLM's 384 values, then zeros
        assert math.hypot(*one) == pytest.approx(1.0, abs=1e-5)
        own = await rt.call_method("em0/embedder", "embed", {"texts": ["What is BGE-M3?"]})
        assert one[:384] == pytest.approx(own["vectors"][0])  # the embedder's own vector
        near = (await rt.call_method("em0", "infer", {"prompt": "What is BGE M3?"}))["embedding"]
        far = (await rt.call_method("em0", "infer", {"prompt": "Bananas are yellow."}))["embedding"]
        assert _dot(one, near) > _dot(one, far)


async def test_the_local_model_s_own_id_answers_at_its_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FERRULE_MODEL_ALIASES", raising=False)
    async with AsyncRuntime() as rt:
        await rt.define("tvm_embedding_model", "em0", {"model": "all-MiniLM-L6-v2"})
        vector = (await rt.call_method("em0", "infer", {"prompt": "hello"}))["embedding"]
        assert len(vector) == 384


async def test_a_model_the_local_embedder_does_not_run_is_refused_naming_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FERRULE_MODEL_ALIASES", raising=False)
    async with AsyncRuntime() as rt:
        with pytest.raises(InvalidInputError, match="FERRULE_MODEL_ALIASES") as refused:
            await rt.define("tvm_embedding_model", "em0", {"model": "BAAI/bge-m3"})
        assert [e["path"] for e in refused.value.errors] == ["$.model"]
        assert rt.kernel.components() == {}  # the embedder it defined went with it
        for attributes, path in [
            ({"device": 1}, "$.device"),
            ({"quantization": "q8"}, "$.quantization"),
            ({"model": ""}, "$.model"),
        ]:
            with pytest.raises(InvalidInputError) as bad:
                await rt.define("tvm_embedding_model", "em0", attributes)
            assert [e["path"] for e in bad.value.errors] == [path]
        monkeypatch.setenv("FERRULE_MODEL_ALIASES", "BAAI/bge-m3=all-MiniLM-L6-v2")
        await rt.define("tvm_embedding_model", "em0", {})
        with pytest.raises(InvalidInputError) as empty:
            await rt.call_method("em0", "infer", {"prompt": ""})
        assert [e["path"] for e in empty.value.errors] == ["$.prompt"]
