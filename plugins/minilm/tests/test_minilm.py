"""ferrule-minilm: the numpy encoder against vectors computed by the reference stack, the
component against the embedder contract, and its failures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from ferrule import AsyncRuntime, InvalidInputError, Runtime
from ferrule_kit.embeddings.embedding import EmbedderUnavailableError, EmbedInput
from ferrule_kit.testing.embedding import EmbedderConformance, EmbedderUnderTest
from ferrule_minilm.embedder import MiniLMEmbedder
from ferrule_minilm.model import WEIGHTS
from ferrule_minilm.plugin import MiniLMAttributes

REFERENCE = json.loads((Path(__file__).with_name("reference_vectors.json")).read_text())


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder(MiniLMAttributes())


def test_vectors_match_the_reference_implementation(embedder: MiniLMEmbedder) -> None:
    out = embedder.embed(EmbedInput(REFERENCE["texts"]))
    got, want = np.array(out["vectors"]), np.array(REFERENCE["vectors"])
    assert got.shape == (5, 384)
    assert np.abs(got - want).max() < 1e-5, "same vectors as transformers + torch"


def test_batching_and_padding_change_nothing(embedder: MiniLMEmbedder) -> None:
    texts = [*REFERENCE["texts"], "word " * 40]  # lengths from 3 to 42 tokens: padding
    together = np.array(embedder.embed(EmbedInput(texts))["vectors"])
    for index, text in enumerate(texts):
        alone = np.array(embedder.embed(EmbedInput([text]))["vectors"][0])
        assert np.abs(alone - together[index]).max() < 1e-5


def test_usage_counts_tokens_with_truncation(embedder: MiniLMEmbedder) -> None:
    out = embedder.embed(EmbedInput(["hello world", "word " * 300]))
    # [CLS] hello world [SEP] = 4; the long text stops at 256
    assert out["usage"]["input_tokens"] == 4 + 256


def test_missing_weights_give_one_typed_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text((WEIGHTS / "config.json").read_text())
    with pytest.raises(EmbedderUnavailableError) as error:
        MiniLMEmbedder(MiniLMAttributes(), weights=tmp_path)
    assert error.value.details["embedder"] == "minilm_embedder"


def test_sync_runtime_and_alias() -> None:
    with Runtime() as rt:
        rt.define("local_embedder", "emb", {"batch_size": 4})
        info = rt.call_method("emb", "info", {})
        out = rt.call_method("emb", "embed", {"texts": ["a cat", "a dog"], "input_type": "query"})
    assert info == {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "dimension": 384,
        "max_batch": 4,
        "max_input_tokens": 256,
        "normalized": True,
        "distance": "cosine",
    }
    assert len(out["vectors"]) == 2 and out["dimension"] == 384


class TestMiniLMConformance(EmbedderConformance):
    @pytest.fixture
    async def embedder(self):
        async with AsyncRuntime() as rt:
            # a small batch size, so that splitting large inputs is tested on few texts
            await rt.define("minilm_embedder", "emb", {"batch_size": 8})
            yield EmbedderUnderTest(rt, "emb", semantic=True)


def test_a_wider_dimension_pads_with_zeros(embedder: MiniLMEmbedder) -> None:
    wide = MiniLMEmbedder(MiniLMAttributes(dimension=1024))
    texts = REFERENCE["texts"][:2]
    out = wide.embed(EmbedInput(texts))
    assert out["dimension"] == 1024 and wide.info(None)["dimension"] == 1024  # type: ignore[arg-type]
    got = np.array(out["vectors"])
    assert got.shape == (2, 1024) and not got[:, 384:].any()
    assert np.array_equal(got[:, :384], np.array(embedder.embed(EmbedInput(texts))["vectors"]))
    with pytest.raises(InvalidInputError) as error:
        MiniLMAttributes(dimension=100)
    assert [e["path"] for e in error.value.errors] == ["dimension"]


BEFORE = json.loads((Path(__file__).with_name("vectors_before_threads.json")).read_text())


@pytest.mark.parametrize(
    ("threads", "batch_size"), [(1, 32), (2, 32), (2, 1), (3, 2)], ids=lambda v: str(v)
)
def test_worker_threads_and_batches_give_the_vectors_of_before(
    threads: int, batch_size: int
) -> None:
    """However a call is cut into batches and spread over threads, the vectors are those
    the embedder gave before it ran its own threads (`vectors_before_threads.json`: a
    text truncated at 256 tokens, code, a question), to float32 rounding."""
    embedder = MiniLMEmbedder(MiniLMAttributes(batch_size=batch_size, threads=threads))
    got = np.array(embedder.embed(EmbedInput(BEFORE["texts"]))["vectors"])
    assert np.abs(got - np.array(BEFORE["vectors"])).max() < 1e-6


def test_blas_threads_are_limited_only_while_embedding(embedder: MiniLMEmbedder) -> None:
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    embedder.embed(EmbedInput(["a cat", "a dog", "a ship"]))
    assert blas_threads() == before


def test_threads_default_to_the_cores_this_process_may_use() -> None:
    from ferrule_minilm.embedder import available_cores

    assert MiniLMEmbedder(MiniLMAttributes()).threads == available_cores() >= 1
    with pytest.raises(InvalidInputError) as error:
        MiniLMAttributes(threads=0)
    assert [e["path"] for e in error.value.errors] == ["threads"]


def test_a_prompt_goes_before_every_text(embedder: MiniLMEmbedder) -> None:
    prompted = MiniLMEmbedder(MiniLMAttributes(prompt="query: "))
    texts = ["tides at the harbour", "rye bread"]
    got = np.array(prompted.embed(EmbedInput(texts))["vectors"])
    want = np.array(embedder.embed(EmbedInput([f"query: {t}" for t in texts]))["vectors"])
    assert np.abs(got - want).max() < 1e-6
    plain = np.array(embedder.embed(EmbedInput(texts))["vectors"])
    assert np.abs(got - plain).max() > 1e-3, "the prompt changes the vectors"
    with Runtime() as rt, pytest.raises(InvalidInputError) as error:
        rt.define("minilm_embedder", "emb", {"prompt": 3})
    assert [e["path"] for e in error.value.errors] == ["$.prompt"]
