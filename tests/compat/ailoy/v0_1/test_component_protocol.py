"""Ailoy 0.1's raw component protocol (the cases of its Node ``runtime.spec.ts``, which the
Python runtime speaks the same way): Ailoy's component type names and methods on
ferrule's components, each case on an in-process runtime and over ``ferrule serve``.

- ``faiss_vector_store`` / ``chromadb_vector_store``: ``insert_many`` (a bare list),
  ``get_by_id``, ``retrieve`` (nearest first, ``similarity``), ``remove`` and ``clear``
  (answering ``true``): ferrule-ailoy's types over ferrule-faiss's and ferrule-chroma's
  stores; the Chroma store on a real Chroma server. Over the network its ``url`` passes
  the address policy of ``http_request``.
- ``tvm_embedding_model``: ferrule-ailoy's, over ferrule-minilm's embedder,
  ``infer({prompt})`` -> ``{embedding}``; ``BAAI/bge-m3`` is the offline MiniLM by alias,
  at bge-m3's 1024 dimensions as Ailoy's case checks (MiniLM's 384 values, then zeros: no
  distance changes).
- ``tvm_language_model``: the offline SmolLM2 by alias, streaming ``{message,
  finish_reason}`` (in process only, on ``inproc://language_model`` as Ailoy's case has
  it: the model's stream over the server is the Node tests' and tests/test_serve*'s).
- ``http_request``: ``status_code`` and the server's header names, from a loopback server.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.server import ServerThread
from ferrule_chroma.testing import ChromaServer
from ferrule_kernel import InvalidInputError, UnknownComponentError
from ferrule_kit.network.addresses import ALLOW_VARIABLE
from ferrule_kit.testing.loopback import LoopbackServer, Reply

SENTENCE = "hello world"


@pytest.fixture(scope="module", params=["in_process", "served"])
def rt(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    """Ailoy's ``new Runtime()``: in this process, or a client of ``ferrule serve``."""
    if request.param == "in_process":
        with Runtime() as runtime:
            yield runtime
    else:
        with ServerThread() as url, Runtime(url=url) as runtime:
            yield runtime


@pytest.fixture(scope="module")
def chroma_server() -> Iterator[ChromaServer]:
    with ChromaServer() as server:
        yield server


def served(rt: Runtime) -> bool:
    return rt.url is not None


def test_run_echo(rt: Runtime) -> None:
    assert rt.call("echo", {"text": SENTENCE})["text"] == SENTENCE


def test_run_spell(rt: Runtime) -> None:
    sentence = "abcdefghijk"
    letters = [out["text"] for out in rt.call_iter("spell", {"text": sentence})]
    assert letters == list(sentence)


def test_run_multiple(rt: Runtime) -> None:
    sentence = "artificial intelligence"
    one = rt.call_iter("spell", {"text": sentence})
    two = rt.call_iter("spell", {"text": sentence.upper()})
    first, second = "", ""
    for a, b in zip(one, two, strict=True):  # interleaved, as Ailoy's case steps them
        first += a["text"]
        second += b["text"]
    assert (first, second.lower()) == (sentence, sentence)


def test_run_split_text(rt: Runtime) -> None:
    text = (
        "Madam Speaker, Madam Vice President, our First Lady and Second Gentleman. Members "
        "of Congress and the Cabinet. Justices of the Supreme Court. My fellow Americans.\n\n"
        "Last year COVID-19 kept us apart. This year we are finally together again.\n\n"
        "Tonight, we meet as Democrats Republicans and Independents. But most importantly "
        "as Americans."
    )
    chunks = rt.call("split_text", {"text": text, "chunk_size": 500, "chunk_overlap": 200})[
        "chunks"
    ]
    assert chunks and all(len(chunk) < 500 for chunk in chunks)
    assert "most importantly as Americans" in chunks[-1]


def test_run_embedding_model(rt: Runtime) -> None:
    rt.define("tvm_embedding_model", "em0", {})
    try:
        embedding = rt.call_method("em0", "infer", {"prompt": "What is BGE-M3?"})["embedding"]
        assert len(embedding) == 1024  # Ailoy's shape check: bge-m3's width
        assert any(embedding[:384]) and not any(embedding[384:])  # MiniLM's, then zeros
        assert math.hypot(*embedding) == pytest.approx(1.0, abs=1e-5)
        near = rt.call_method("em0", "infer", {"prompt": "What is BGE M3?"})["embedding"]
        far = rt.call_method("em0", "infer", {"prompt": "Bananas are yellow."})["embedding"]
        assert _dot(embedding, near) > _dot(embedding, far)
    finally:
        rt.delete("em0")


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _ailoy_vector_store_case(rt: Runtime, cosine_range: bool) -> None:
    """Ailoy's vector-store case, on the component ``vs0``: insert two, get one, retrieve
    both nearest first, remove, clear, delete."""
    rng = random.Random()
    inputs = [
        {
            "embedding": [rng.random() for _ in range(10)],
            "document": "doc1",
            "metadata": {"value": 1},
        },
        {"embedding": [rng.random() for _ in range(10)], "document": "doc2", "metadata": None},
    ]
    resp1 = rt.call_method("vs0", "insert_many", inputs)  # type: ignore[arg-type]  # a bare list
    assert "ids" in resp1
    ids = resp1["ids"]

    resp2 = rt.call_method("vs0", "get_by_id", {"id": ids[0]})
    assert resp2["id"] == ids[0]
    assert resp2["document"] == inputs[0]["document"]
    assert resp2["metadata"] == inputs[0]["metadata"]

    resp3 = rt.call_method(
        "vs0", "retrieve", {"query_embedding": inputs[0]["embedding"], "top_k": 2}
    )
    results = resp3["results"]
    assert len(results) == 2
    for i, result in enumerate(results):
        assert result["id"] == ids[i]
        assert result["document"] == inputs[i]["document"]
        assert result["metadata"] == inputs[i]["metadata"]
        assert result["similarity"] <= results[0]["similarity"]
        if cosine_range:
            assert 0.0 <= round(result["similarity"], 6) <= 1.0

    assert rt.call_method("vs0", "remove", {"id": ids[0]}) is True
    assert rt.call_method("vs0", "get_by_id", {"id": ids[0]}) is None
    assert rt.call_method("vs0", "clear", None) is True
    assert rt.call_method("vs0/store", "count", {})["count"] == 0  # ferrule's own store
    rt.delete("vs0")
    with pytest.raises(UnknownComponentError):  # deleted with it
        rt.call_method("vs0/store", "count", {})


def test_run_faiss_vector_store(rt: Runtime) -> None:
    rt.define("faiss_vector_store", "vs0", {"dimension": 10})
    _ailoy_vector_store_case(rt, cosine_range=True)


def test_run_chromadb_vector_store(
    rt: Runtime, chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ailoy's case names http://localhost:8000; this server's port is a free one.
    url = f"http://localhost:{chroma_server.port}"
    # Ailoy's attributes (no database): a collection of its own keeps the case apart
    attributes = {"url": url, "collection": f"ailoy_{'served' if served(rt) else 'local'}"}
    if served(rt):
        # A url from a network client goes where http_request may: not to loopback,
        # unless the host allows it. How a host lets its clients use a local Chroma:
        monkeypatch.delenv(ALLOW_VARIABLE, raising=False)
        with pytest.raises(InvalidInputError, match=ALLOW_VARIABLE) as refused:
            rt.define("chromadb_vector_store", "vs0", attributes)
        assert [e["path"] for e in refused.value.errors] == ["$.url"]
        monkeypatch.setenv(ALLOW_VARIABLE, "localhost")
    rt.define("chromadb_vector_store", "vs0", attributes)
    _ailoy_vector_store_case(rt, cosine_range=True)


def test_run_language_model() -> None:
    rt = Runtime("inproc://language_model")  # Ailoy's case names its runtime so
    rt.define("tvm_language_model", "lm0", {"model": "Qwen/Qwen3-0.6B"})
    try:
        question = "Who is the president of US in 2021?"
        messages = [{"role": "user", "content": [{"type": "text", "text": question}]}]
        items = list(rt.call_iter_method("lm0", "infer", {"messages": messages, "tools": []}))
        text = ""
        for resp in items:
            assert "message" in resp
            if resp.get("finish_reason"):
                assert resp["finish_reason"] == "stop"
            else:
                assert "content" in resp["message"]
                text += "".join(p.get("text", "") for p in resp["message"]["content"])
        assert items[-1]["finish_reason"] == "stop"
        assert text.strip(), "the offline model answered"
    finally:
        rt.delete("lm0")
        rt.stop()


@pytest.fixture
def rates_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:
    """Frankfurter's answer to Ailoy's request, from a loopback server the host allows."""
    monkeypatch.setenv(ALLOW_VARIABLE, "127.0.0.1")
    with LoopbackServer() as server:
        rates: dict[str, Any] = {"amount": 1.0, "base": "USD", "date": "2026-11-26"}
        server.script(Reply.json({**rates, "rates": {"KRW": 1391.5}}))
        yield server


def test_run_http_request(rt: Runtime, rates_server: LoopbackServer) -> None:
    args = {
        "url": f"{rates_server.url}/v1/latest?base=USD&symbols=KRW",
        "method": "GET",
        "headers": {},
    }
    resp = rt.call("http_request", args)
    assert resp["status_code"] == 200
    assert resp["headers"]["Content-Type"].startswith("application/json")
    body = json.loads(resp["body"])
    assert body["amount"] == 1.0
    assert body["base"] == "USD"
    assert "KRW" in body["rates"]
    sent = rates_server.requests[-1]
    assert (sent.method, sent.path, sent.query) == (
        "GET",
        "/v1/latest",
        {"base": "USD", "symbols": "KRW"},
    )
