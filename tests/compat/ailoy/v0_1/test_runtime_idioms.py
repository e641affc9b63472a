"""Ailoy 0.1's low-level ``Runtime`` idioms, as its tutorials and API reference write them,
as our own programs (``ailoy`` -> ``ferrule``), each checked on its outcome, in this process
and over ``ferrule serve`` (the same answers):

- operators: ``call`` / ``call_iter`` (``echo``, ``spell``, ``split_text``), the runtime as a
  context manager and as ``AsyncRuntime``;
- the raw component protocol end to end: a retrieval pipeline of ``split_text``,
  ``tvm_embedding_model`` and ``faiss_vector_store`` (``insert_many``, ``retrieve``,
  ``get_by_id``, ``remove``), ferrule-ailoy's types over ferrule's MiniLM and FAISS;
- what is installed: Ailoy's types listed with their methods, from ferrule-ailoy; and an
  Ailoy type whose plugins are missing names the ``pip install`` that provides it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ferrule import AsyncRuntime, Runtime
from ferrule.catalog import install_hint
from ferrule.server import ServerThread
from ferrule_kernel import Kernel, UnknownComponentTypeError

STORY = (
    "The shoemaker Simon lived with his wife in a peasant's hut and earned his living by "
    "his work. Work was cheap, but bread was dear.\n\n"
    "One winter morning Simon went to the village to buy sheep-skins for a new coat, but "
    "nobody paid him what they owed.\n\n"
    "On his way home he found a naked stranger sitting behind the shrine at the bend of "
    "the road, and gave him his own coat.\n\n"
    "The stranger, whose name was Michael, stayed with them and became the best bootmaker "
    "in the district."
)


@pytest.fixture(scope="module", params=["in_process", "served"])
def rt(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    if request.param == "in_process":
        with Runtime() as runtime:
            yield runtime
    else:
        with ServerThread() as url, Runtime(url=url) as runtime:
            yield runtime


def test_operators_call_and_call_iter(rt: Runtime) -> None:
    assert rt.call("echo", {"text": "Hello world"}) == {"text": "Hello world"}
    assert [out["text"] for out in rt.call_iter("spell", {"text": "Ailoy"})] == list("Ailoy")
    chunks = rt.call("split_text", {"text": STORY, "chunk_size": 200, "chunk_overlap": 0})["chunks"]
    assert len(chunks) >= 4 and all(len(chunk) <= 200 for chunk in chunks)
    assert "Michael" in chunks[-1]


def test_a_retrieval_pipeline_on_ailoy_s_raw_components(rt: Runtime) -> None:
    chunks = rt.call("split_text", {"text": STORY, "chunk_size": 200, "chunk_overlap": 0})["chunks"]
    rt.define("tvm_embedding_model", "emb", {"model": "BAAI/bge-m3"})
    rt.define("faiss_vector_store", "vs", {"dimension": 1024})
    try:
        items = [
            {
                "embedding": rt.call_method("emb", "infer", {"prompt": chunk})["embedding"],
                "document": chunk,
                "metadata": {"index": i},
            }
            for i, chunk in enumerate(chunks)
        ]
        ids = rt.call_method("vs", "insert_many", items)["ids"]  # type: ignore[arg-type]
        assert len(ids) == len(chunks)
        query = rt.call_method("emb", "infer", {"prompt": "Who gave the stranger a coat?"})
        found = rt.call_method(
            "vs", "retrieve", {"query_embedding": query["embedding"], "top_k": 2}
        )["results"]
        assert "gave him his own coat" in found[0]["document"]
        assert found[0]["similarity"] > found[1]["similarity"]
        stored = rt.call_method("vs", "get_by_id", {"id": found[0]["id"]})
        assert stored["metadata"] == {"index": chunks.index(found[0]["document"])}
        assert rt.call_method("vs", "remove", {"id": found[0]["id"]}) is True
        again = rt.call_method(
            "vs", "retrieve", {"query_embedding": query["embedding"], "top_k": 1}
        )["results"]
        assert again[0]["id"] != found[0]["id"]
    finally:
        rt.delete("vs")
        rt.delete("emb")


async def test_the_async_runtime_speaks_the_same_protocol() -> None:
    async with AsyncRuntime() as rt:
        assert (await rt.call("echo", {"text": "async"}))["text"] == "async"
        letters = [out["text"] async for out in rt.call_iter("spell", {"text": "abc"})]
        assert letters == ["a", "b", "c"]
        await rt.define("faiss_vector_store", "vs", {"dimension": 2})
        await rt.call_method("vs", "insert", {"embedding": [1.0, 0.0], "document": "east"})
        await rt.call_method("vs", "insert", {"embedding": [0.0, 1.0], "document": "north"})
        found = await rt.call_method("vs", "retrieve", {"query_embedding": [0.9, 0.1], "top_k": 1})
        assert [r["document"] for r in found["results"]] == ["east"]
        assert await rt.call_method("vs", "clear", None) is True
        await rt.delete("vs")


def test_ailoy_s_types_are_listed_with_their_methods(rt: Runtime) -> None:
    listed = {entry["name"]: entry for entry in rt.component_types()}
    methods = {
        "faiss_vector_store": {"insert", "insert_many", "get_by_id", "retrieve", "remove", "clear"},
        "chromadb_vector_store": {
            "insert",
            "insert_many",
            "get_by_id",
            "retrieve",
            "remove",
            "clear",
        },
        "tvm_embedding_model": {"infer"},
        "openai": {"infer"},
        "claude": {"infer"},
        "gemini": {"infer"},
        "grok": {"infer"},
    }
    for name, expected in methods.items():
        assert listed[name]["distribution"] == "ferrule-ailoy", name
        assert {m["name"] for m in listed[name]["methods"]} == expected, name
    schemas = {m["name"]: m["input_schema"] for m in listed["faiss_vector_store"]["methods"]}
    assert schemas["insert_many"]["type"] == "array"  # a bare JSON array, Ailoy's way


async def test_an_ailoy_type_without_its_plugins_names_what_to_install() -> None:
    kernel = Kernel(load_entry_points=False, install_hint=install_hint)
    with pytest.raises(UnknownComponentTypeError, match="pip install ferrule-ailoy ferrule-faiss"):
        await kernel.define("faiss_vector_store", "vs0", {"dimension": 3})
    with pytest.raises(UnknownComponentTypeError, match="ferrule-ailoy over ferrule-openai"):
        await kernel.define("openai", "m", {"api_key": "k", "model": "gpt-4o"})
