"""What Chroma itself adds: the data really is in the Chroma server (seen by Chroma's own
client, and a collection written by that client read back), the URL's checks and an
unreachable server's typed error."""

from __future__ import annotations

import socket

import chromadb
import pytest
from ferrule import Runtime
from ferrule_chroma.testing import ChromaServer
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.embeddings.vectors import UnsupportedOperationError, VectorStoreUnavailableError
from ferrule_kit.network.addresses import ALLOW_VARIABLE


def test_chunks_are_in_the_chroma_server(chroma_server: ChromaServer) -> None:
    database = chroma_server.new_database()
    with Runtime() as rt:
        rt.define(
            "chroma_vector_store",
            "kb",
            {
                "url": chroma_server.url,
                "database": database,
                "collection": "seen",
                "distance": "l2",
            },
        )
        rt.call_method(
            "kb",
            "upsert",
            {
                "chunks": [
                    {
                        "id": "a",
                        "vector": [1.0, 0.0],
                        "text": "alpha",
                        "document_id": "d1",
                        "metadata": {"deep": {"x": [1, 2]}},
                    },
                    {"id": "b", "vector": [0.0, 2.0], "text": "beta"},
                ]
            },
        )
        found = rt.call_method("kb", "search", {"vector": [0.0, 0.0], "top_k": 2})["matches"]
        assert [(m["id"], m["distance"]) for m in found] == [("a", 1.0), ("b", 2.0)]
        with pytest.raises(UnsupportedOperationError, match="no keyword search"):
            rt.call_method("kb", "keyword_search", {"query": "alpha"})
    client = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port, database=database)
    native = client.get_collection("seen")
    assert native.configuration["hnsw"]["space"] == "l2"
    stored = native.get(ids=["a"], include=["documents", "metadatas"])
    assert stored["documents"] == ["alpha"] and stored["metadatas"][0]["document_id"] == "d1"


def test_a_collection_written_by_chroma_s_own_client_reads_back(
    chroma_server: ChromaServer,
) -> None:
    database = chroma_server.new_database()
    client = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port, database=database)
    native = client.create_collection(
        "theirs", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
    )
    native.add(
        ids=["x"], embeddings=[[0.0, 1.0, 0.0]], documents=["hers"], metadatas=[{"lang": "en"}]
    )
    with Runtime() as rt:
        rt.define(
            "chroma_vector_store",
            "kb",
            {"url": chroma_server.url, "database": database, "collection": "theirs"},
        )
        info = rt.call_method("kb", "info", {})
        assert (info["dimension"], info["distance"], info["count"]) == (3, "cosine", 1)
        found = rt.call_method(
            "kb", "search", {"vector": [0.0, 1.0, 0.0], "filter": {"lang": "en"}}
        )["matches"]
        assert [(m["id"], m["text"], m["metadata"]) for m in found] == [
            ("x", "hers", {"lang": "en"})
        ]


@pytest.mark.parametrize(
    "url", ["localhost:8000", "ftp://localhost:8000", "http://", "http://h:99999", "http://h/x"]
)
def test_a_bad_url_names_the_field(url: str) -> None:
    with Runtime() as rt, pytest.raises(InvalidInputError) as error:
        rt.define("chroma_vector_store", "kb", {"url": url})
    assert [e["path"] for e in error.value.errors] == ["url"]


def test_an_unreachable_server_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("FERRULE_CHROMA_URL", f"http://127.0.0.1:{port}")
    with Runtime() as rt:
        rt.define("chroma_vector_store", "kb", {})
        with pytest.raises(VectorStoreUnavailableError) as error:
            rt.call_method("kb", "count", {})
    assert error.value.details["server"] == f"http://127.0.0.1:{port}"


def test_a_name_chroma_takes_but_sql_would_not_is_a_chroma_collection(
    chroma_server: ChromaServer,
) -> None:
    database = chroma_server.new_database()
    with Runtime() as rt:
        for name in ("thai-recipes", "v1.docs"):
            attributes = {"url": chroma_server.url, "database": database, "collection": name}
            rt.define("chroma_vector_store", name, attributes)
            chunk = {"id": "a", "vector": [1.0, 0.0], "text": name}
            rt.call_method(name, "upsert", {"chunks": [chunk]})
            assert rt.call_method(name, "count", {})["count"] == 1
    client = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port, database=database)
    assert sorted(c.name for c in client.list_collections()) == ["thai-recipes", "v1.docs"]


@pytest.mark.parametrize("name", ["ab", "_ab", "ab_", "a..b", "a b", "x" * 64])
def test_a_collection_name_chroma_refuses_names_the_field(name: str) -> None:
    with Runtime() as rt, pytest.raises(InvalidInputError) as error:
        rt.define("chroma_vector_store", "kb", {"collection": name})
    assert [e["path"] for e in error.value.errors] == ["$.collection"]


async def test_a_url_from_the_network_must_pass_the_address_policy(
    chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ferrule serve's clients are untrusted callers: a url they send reaches only what
    # http_request may reach (public addresses, and what FERRULE_HTTP_REQUEST_ALLOW allows)
    monkeypatch.delenv(ALLOW_VARIABLE, raising=False)
    kernel = Kernel()
    database = chroma_server.new_database()
    attributes = {"url": chroma_server.url, "database": database, "dimension": 3}
    with pytest.raises(InvalidInputError) as refused:
        await kernel.define("chroma_vector_store", "vs0", attributes)
    assert [e["path"] for e in refused.value.errors] == ["$.url"]
    assert "loopback" in refused.value.message and ALLOW_VARIABLE in refused.value.message
    assert kernel.components() == {}
    local = f"http://localhost:{chroma_server.port}"
    with pytest.raises(InvalidInputError, match="loopback"):
        await kernel.define("chroma_vector_store", "vs0", {**attributes, "url": local})

    monkeypatch.setenv(ALLOW_VARIABLE, "localhost")  # how a host lets its clients use it
    await kernel.define("chroma_vector_store", "vs0", {**attributes, "url": local})
    chunk = {"id": "c1", "vector": [1.0, 0.0, 0.0], "text": "d"}
    await kernel.call_method("vs0", "upsert", {"chunks": [chunk]})
    assert (await kernel.call_method("vs0", "count", {}))["count"] == 1
    with pytest.raises(InvalidInputError, match="loopback"):  # the name, not its address
        await kernel.define("chroma_vector_store", "vs1", attributes)
    monkeypatch.setenv(ALLOW_VARIABLE, "127.0.0.0/8")
    await kernel.define("chroma_vector_store", "vs1", attributes)
    await kernel.aclose()


def test_a_url_from_code_in_the_process_is_taken_as_given(
    chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_VARIABLE, raising=False)
    with Runtime() as rt:  # in-process: trusted
        database = chroma_server.new_database()
        attributes = {"url": chroma_server.url, "database": database, "dimension": 2}
        rt.define("chroma_vector_store", "vs0", attributes)
        assert rt.call_method("vs0", "count", {})["count"] == 0
