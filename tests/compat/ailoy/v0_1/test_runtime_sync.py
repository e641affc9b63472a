"""Ailoy 0.1 `test_runtime_sync.py`: a named in-process Runtime, operators, and the
`VectorStore` of an embedding model and FAISS."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ferrule import Runtime
from ferrule.vector_store import VectorStore


@pytest.fixture(scope="module")
def runtime() -> Iterator[Runtime]:
    rt = Runtime("inproc://sync")
    yield rt
    rt.stop()


def test_echo(runtime: Runtime) -> None:
    assert runtime.call("echo", {"text": "hello world"})["text"] == "hello world"


def test_spell(runtime: Runtime) -> None:
    letters = [out["text"] for out in runtime.call_iter("spell", {"text": "abcdefghijk"})]
    assert letters == list("abcdefghijk")


def test_vectorstore(runtime: Runtime) -> None:
    with VectorStore(runtime, "BAAI/bge-m3", "faiss") as vs:
        vs.insert(
            document="BGE M3 is an embedding model supporting dense retrieval, lexical "
            "matching and multi-vector interaction.",
            metadata={"value": "BGE-M3"},
        )
        vs.insert(
            document="BM25 is a bag-of-words retrieval function that ranks a set of documents "
            "based on the query terms appearing in each document",
            metadata={"value": "BM25"},
        )
        found = vs.retrieve(query="What is BGE M3?", top_k=1)
        assert len(found) == 1 and found[0].metadata == {"value": "BGE-M3"}
        assert 0 < found[0].similarity <= 1
        # a named runtime is shared by name: another handle sees the same components
        assert Runtime("inproc://sync").kernel is runtime.kernel


def test_vectorstore_remove_clear_and_delete(runtime: Runtime) -> None:
    vs = VectorStore(runtime, "BAAI/bge-m3", "faiss")
    kept = vs.insert("Seoul is the capital of South Korea.")
    gone = vs.insert("Paris is the capital of France.")
    vs.remove(gone)
    assert [item.id for item in vs.retrieve("capital", top_k=5)] == [kept]
    vs.clear()
    assert vs.retrieve("capital") == []
    vs.delete()
    with pytest.raises(Exception, match="deleted"):
        vs.insert("after delete")
