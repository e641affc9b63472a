"""Ailoy 0.1's `tvm_embedding_model` on this plugin's embedder: Ailoy's attributes and
``infer``, the same vectors as ``embed``, its model id resolved through
``$FERRULE_MODEL_ALIASES`` and refused (naming ``model``) when it stands for another model.
An aliased id keeps its own model's width (bge-m3's 1024: MiniLM's 384 values, then zeros,
as `ferrule.EmbeddingModel` gives); MiniLM's own id gets MiniLM's 384."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from ferrule import Runtime
from ferrule_kernel import InvalidInputError


@pytest.fixture
def rt(monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    monkeypatch.setenv("FERRULE_MODEL_ALIASES", "BAAI/bge-m3=all-MiniLM-L6-v2")
    with Runtime() as runtime:
        yield runtime


def test_infer_is_embed_of_one_prompt(rt: Runtime) -> None:
    rt.define("tvm_embedding_model", "em0", {})  # Ailoy's default model: BAAI/bge-m3
    vector = rt.call_method("em0", "infer", {"prompt": "What is BGE-M3?"})["embedding"]
    assert len(vector) == 1024 == rt.call_method("em0", "info", {})["dimension"]
    assert math.hypot(*vector) == pytest.approx(1.0, abs=1e-5)
    assert any(vector[:384]) and not any(vector[384:])  # MiniLM's values, then zeros
    same = rt.call_method("em0", "embed", {"texts": ["What is BGE-M3?"]})["vectors"][0]
    assert vector == same
    near = rt.call_method("em0", "infer", {"prompt": "What is BGE M3?"})["embedding"]
    far = rt.call_method("em0", "infer", {"prompt": "Bananas are yellow."})["embedding"]

    def dot(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert dot(vector, near) > dot(vector, far)


def test_the_model_must_stand_for_minilm(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    rt.define("tvm_embedding_model", "own", {"model": "sentence-transformers/all-MiniLM-L6-v2"})
    assert rt.call_method("own", "info", {})["dimension"] == 384  # not an alias: its own
    with pytest.raises(InvalidInputError, match="FERRULE_MODEL_ALIASES") as other:
        rt.define("tvm_embedding_model", "other", {"model": "intfloat/e5-large"})
    assert [e["path"] for e in other.value.errors] == ["model"]
    monkeypatch.delenv("FERRULE_MODEL_ALIASES")
    with pytest.raises(InvalidInputError, match="'BAAI/bge-m3'"):
        rt.define("tvm_embedding_model", "unaliased", {})
    assert set(rt.kernel.components()) == {"own"}


@pytest.mark.parametrize(
    ("attributes", "path"),
    [({"device": 1}, "$.device"), ({"quantization": "q4f32_1"}, "$.quantization")],
)
def test_ailoy_s_other_attributes_are_checked(rt: Runtime, attributes: dict, path: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        rt.define("tvm_embedding_model", "em1", attributes)
    assert [e["path"] for e in refused.value.errors] == [path]


def test_an_empty_prompt_is_refused(rt: Runtime) -> None:
    rt.define("tvm_embedding_model", "em0", {})
    with pytest.raises(InvalidInputError) as refused:
        rt.call_method("em0", "infer", {"prompt": ""})
    assert [e["path"] for e in refused.value.errors] == ["$.prompt"]
