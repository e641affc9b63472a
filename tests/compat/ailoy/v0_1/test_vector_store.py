"""Ailoy 0.1's `VectorStore` beyond its test suite's FAISS case (in test_runtime_sync.py):
what its docs' "RAG with Vector Store" tutorial and its class do. The ``chromadb`` store
with ``url`` and ``collection``, on a real Chroma server this module starts; ``embedding``;
``clean``; ``define`` and ``delete`` as no-ops when already done; retrieved items with
Ailoy's fields. ``BAAI/bge-m3`` runs as the offline MiniLM (the shared conftest's alias),
its vectors kept bge-m3's 1024 wide."""

from __future__ import annotations

from collections.abc import Iterator

import ferrule as ai
import pytest
from ferrule.vector_store import VectorStore, VectorStoreRetrieveItem
from ferrule_chroma.testing import ChromaServer

AILOY = "Ailoy is a lightweight library for building AI applications"


@pytest.fixture(scope="module")
def runtime() -> Iterator[ai.Runtime]:
    rt = ai.Runtime("inproc://vector-store")
    yield rt
    rt.stop()


@pytest.fixture(scope="module")
def chroma_server() -> Iterator[ChromaServer]:
    with ChromaServer() as server:
        yield server


@pytest.mark.parametrize("store", ["faiss", "chromadb"])
def test_rag_with_vector_store(
    runtime: ai.Runtime, chroma_server: ChromaServer, store: str
) -> None:
    """The tutorial: insert with metadata, retrieve by a question, build the prompt from
    the items' documents."""
    options = {"url": chroma_server.url, "collection": "tutorial"} if store == "chromadb" else {}
    with VectorStore(runtime, "BAAI/bge-m3", store, **options) as vs:
        vs.insert(AILOY, metadata={"topic": "Ailoy"})
        vs.insert("The ferry to Holm leaves at nine.", metadata={"topic": "ferry"})
        query = "What is Ailoy?"
        items = vs.retrieve(query, top_k=5)
        assert all(isinstance(item, VectorStoreRetrieveItem) for item in items)
        assert [item.metadata for item in items] == [{"topic": "Ailoy"}, {"topic": "ferry"}]
        assert items[0].document == AILOY
        assert items[0].similarity > items[1].similarity
        prompt = f"Context: {[item.document for item in items]}\nQuestion: {query}"
        assert AILOY in prompt
        vs.clean()
        assert vs.retrieve(query) == []


def test_embedding_is_the_model_s_vector(runtime: ai.Runtime) -> None:
    with ai.VectorStore(
        runtime, embedding_model_name="BAAI/bge-m3", vector_store_name="faiss"
    ) as vs:
        vector = vs.embedding("What is BGE-M3?")
        assert len(vector) == 1024
        assert sum(x * x for x in vector) == pytest.approx(1.0, abs=1e-5)
        assert vs.embedding("What is BGE-M3?") == vector


def test_define_and_delete_are_no_ops_when_done(runtime: ai.Runtime) -> None:
    vs = VectorStore(runtime, "BAAI/bge-m3", "faiss")
    name = vs.name
    vs.define("BAAI/bge-m3", "faiss")  # already defined: nothing new
    assert vs.name == name
    vs.insert(AILOY)
    vs.delete()
    vs.delete()
    with pytest.raises(ai.InvalidInputError, match="deleted"):
        vs.retrieve("anything")


def test_an_unknown_store_is_refused_and_nothing_is_left(runtime: ai.Runtime) -> None:
    before = runtime.kernel.components()
    with pytest.raises(ai.FerruleError, match="no_such_store"):
        VectorStore(runtime, "BAAI/bge-m3", "no_such_store")
    assert runtime.kernel.components() == before  # the embedding model went too
