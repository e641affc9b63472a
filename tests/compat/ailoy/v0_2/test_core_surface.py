"""Ailoy 0.2's declared surface (its ``_core.pyi``) beyond what its test files call, each
checked for what it does: ``validate_checksum`` / ``device_id`` / ``kv_cache`` /
``model_name`` of ``new_local``, ``EmbeddingModel.remove``, ``Knowledge.retrieve`` and
``Knowledge.as_tool``, ``VectorStore.retrieve(query_embedding=)``. On the offline models
(SmolLM2 by llama.cpp, MiniLM) and FAISS."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import ferrule as ai
import ferrule_minilm.embedder
import pytest

DOC0 = "Ailoy is an awesome AI agent framework supporting Rust, Python, Nodejs and WebAssembly."
DOC1 = "The ferry leaves the harbour at nine every morning."


@pytest.fixture(scope="module")
def runtime() -> Iterator[ai.Runtime]:
    with ai.Runtime() as rt:
        yield rt


@pytest.fixture(scope="module")
def emb(runtime: ai.Runtime) -> ai.EmbeddingModel:
    return ai.EmbeddingModel.new_local_sync("all-MiniLM-L6-v2", runtime=runtime)


@pytest.fixture
def knowledge(runtime: ai.Runtime, emb: ai.EmbeddingModel) -> Iterator[ai.Knowledge]:
    store = ai.VectorStore.new_faiss(emb.dimension, runtime=runtime)
    for document in (DOC0, DOC1):
        store.add_vector(
            ai.VectorStoreAddInput(embedding=emb.infer_sync(document), document=document)
        )
    knowledge = ai.Knowledge.new_vector_store(store, emb)
    yield knowledge
    knowledge.close()


@pytest.fixture
def damaged_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of MiniLM's weights with one byte of a tensor changed (the file still loads:
    only its checksum tells), put where the embedder loads its weights from."""
    weights = tmp_path / "weights"
    shutil.copytree(ferrule_minilm.embedder.WEIGHTS, weights)
    tensors = weights / "model.safetensors"
    data = bytearray(tensors.read_bytes())
    data[-100] ^= 0x01
    tensors.write_bytes(bytes(data))
    monkeypatch.setattr(ferrule_minilm.embedder, "WEIGHTS", weights)
    return weights


async def test_embedding_model_validate_checksum(
    runtime: ai.Runtime, damaged_weights: Path
) -> None:
    """Ailoy's ``validate_checksum``: unset or True, the weights are checked against their
    published SHA-256 before they load and a damaged file is refused, named; False loads
    them unchecked (the damaged tensor embeds)."""
    for asked in ({}, {"validate_checksum": True}):
        with pytest.raises(ai.FerruleError, match=r"model\.safetensors") as error:
            await ai.EmbeddingModel.new_local("all-MiniLM-L6-v2", runtime=runtime, **asked)
        assert "SHA-256" in str(error.value)
    unchecked = await ai.EmbeddingModel.new_local(
        "all-MiniLM-L6-v2", validate_checksum=False, runtime=runtime
    )
    assert len(await unchecked.infer("harbour")) == 384
    await unchecked.adelete()


async def test_embedding_model_validate_checksum_of_intact_weights(runtime: ai.Runtime) -> None:
    model = await ai.EmbeddingModel.new_local(
        "all-MiniLM-L6-v2", validate_checksum=True, runtime=runtime
    )
    assert len(await model.infer("harbour")) == 384
    await model.adelete()


async def test_validate_checksum_refused_where_nothing_can_be_checked(runtime: ai.Runtime) -> None:
    """True for a model whose backend has no published checksums (llama.cpp's), or a
    value that is no bool, is refused naming the field; nothing is defined."""
    before = runtime.kernel.components()
    with pytest.raises(ai.InvalidInputError) as error:
        await ai.LangModel.new_local(
            "SmolLM2-135M-Instruct", validate_checksum=True, runtime=runtime
        )
    assert [e["path"] for e in error.value.errors] == ["validate_checksum"]
    with pytest.raises(ai.InvalidInputError) as error:
        await ai.EmbeddingModel.new_local(
            "all-MiniLM-L6-v2", validate_checksum="yes", runtime=runtime
        )
    assert [e["path"] for e in error.value.errors] == ["validate_checksum"]
    assert runtime.kernel.components() == before


def test_embedding_model_remove(runtime: ai.Runtime) -> None:
    """Ailoy's ``remove`` deletes downloaded files: MiniLM's come with its package, so it is
    refused naming the model (and the weights stay usable); an unknown id is refused too."""
    with pytest.raises(ai.InvalidInputError, match="come with its package") as error:
        ai.EmbeddingModel.remove("all-MiniLM-L6-v2", runtime=runtime)
    assert [e["path"] for e in error.value.errors] == ["model_name"]
    assert ferrule_minilm.embedder.WEIGHTS.joinpath("model.safetensors").is_file()
    with pytest.raises(ai.FerruleError, match="no installed plugin serves"):
        ai.EmbeddingModel.remove("no/such-embedder", runtime=runtime)


async def test_langmodel_new_local_ailoy_arguments(runtime: ai.Runtime) -> None:
    """``model_name=`` (Ailoy's keyword), ``validate_checksum=False``, ``device_id=0`` and
    ``kv_cache``: its context window is the model's (a prompt over it is refused, saying
    so)."""
    lm = await ai.LangModel.new_local(
        model_name="SmolLM2-135M-Instruct",
        device_id=0,
        validate_checksum=False,
        kv_cache=ai.KVCacheConfig(context_window_size=256, prefill_chunk_size=64),
        runtime=runtime,
    )
    try:
        short = await lm.infer("Say hi.", config=ai.LangModelInferConfig(max_tokens=4))
        assert short.message.role == "assistant"
        with pytest.raises(ai.FerruleError, match="context holds 256"):
            await lm.infer("harbour " * 400, config=ai.LangModelInferConfig(max_tokens=4))
    finally:
        await lm.adelete()


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"device_id": 1}, "device_id"),
        ({"kv_cache": ai.KVCacheConfig(sliding_window_size=128)}, "kv_cache.sliding_window_size"),
        ({"kv_cache": {"context_window_size": 128}}, "kv_cache"),
        ({"model_id": "SmolLM2-135M-Instruct", "model_name": "x"}, "model_name"),
    ],
)
async def test_langmodel_new_local_refuses_bad_arguments(
    runtime: ai.Runtime, arguments: dict, field: str
) -> None:
    before = runtime.kernel.components()
    arguments = {"model_name": "SmolLM2-135M-Instruct", **arguments}
    with pytest.raises(ai.InvalidInputError) as error:
        await ai.LangModel.new_local(runtime=runtime, **arguments)
    assert [e["path"] for e in error.value.errors] == [field]
    assert runtime.kernel.components() == before


def test_kv_cache_config_checks_its_values() -> None:
    with pytest.raises(ai.InvalidInputError) as error:
        ai.KVCacheConfig(context_window_size=0)
    assert [e["path"] for e in error.value.errors] == ["context_window_size"]


async def test_knowledge_retrieve(knowledge: ai.Knowledge) -> None:
    """Ailoy's ``await knowledge.retrieve(query, KnowledgeConfig(top_k=...))``: the nearest
    documents, best first, as Ailoy's `Document` reads (``text``, ``title``, ``id``); one
    without a ``top_k``, as Ailoy's default config."""
    found = await knowledge.retrieve("What is Ailoy?", ai.KnowledgeConfig(top_k=2))
    assert [d.text for d in found] == [DOC0, DOC1]
    assert all(d.id for d in found) and found[0].title is None
    assert [d.text for d in await knowledge.retrieve("When does the ferry leave?", None)] == [DOC1]
    with pytest.raises(ai.InvalidInputError) as error:
        await knowledge.retrieve("What is Ailoy?", {"top_k": 2})
    assert [e["path"] for e in error.value.errors] == ["config"]


async def test_knowledge_as_tool(knowledge: ai.Knowledge) -> None:
    """Ailoy's ``knowledge.as_tool()``: a tool named ``retrieve-from-knowledge`` taking a
    ``query``, answering the nearest document in Ailoy's shape; an empty query is refused."""
    tool = knowledge.as_tool()
    description = tool.get_description()
    assert description.name == "retrieve-from-knowledge"
    assert description.parameters["required"] == ["query"]
    answer = await tool(query="When does the ferry leave?")
    assert [(d["text"], bool(d["id"])) for d in answer] == [(DOC1, True)]
    with pytest.raises(ai.InvalidInputError) as error:
        await tool(query=" ")
    assert [e["path"] for e in error.value.errors] == ["query"]


def test_vectorstore_retrieve_query_embedding(runtime: ai.Runtime, emb: ai.EmbeddingModel) -> None:
    """Ailoy 0.2's keyword ``retrieve(query_embedding=, top_k=)``; a text and a vector at
    once are refused."""
    store = ai.VectorStore.new_faiss(emb.dimension, runtime=runtime)
    store.add_vectors(
        [ai.VectorStoreAddInput(embedding=emb.infer_sync(d), document=d) for d in (DOC0, DOC1)]
    )
    query = emb.infer_sync("ferry times")
    found = store.retrieve(query_embedding=query, top_k=1)
    assert [r.document for r in found] == [DOC1]
    with pytest.raises(ai.InvalidInputError) as error:
        store.retrieve([0.0] * emb.dimension, 1, query_embedding=query)
    assert [e["path"] for e in error.value.errors] == ["query_embedding"]


async def test_agent_takes_ailoys_arguments(runtime: ai.Runtime) -> None:
    """Ailoy 0.2's ``Agent(lm, [tools])`` (the tools second, by position) and
    ``remove_tools(tool_names=)`` / ``remove_tool(tool_name=)``; an unknown name is refused
    naming the argument."""

    def one() -> int:
        """One."""
        return 1

    def two() -> int:
        """Two."""
        return 2

    lm = await ai.LangModel.new_local("SmolLM2-135M-Instruct", runtime=runtime)
    try:
        agent = ai.Agent(lm, [ai.Tool.new_py_function(one), ai.Tool.new_py_function(two)])
        assert agent.model is lm and [t.name for t in agent.tools] == ["one", "two"]
        agent.remove_tool(tool_name="one")
        with pytest.raises(ai.InvalidInputError) as error:
            agent.remove_tools(tool_names=["one"])
        assert [e["path"] for e in error.value.errors] == ["tool_names"]
        agent.remove_tools(tool_names=["two"])
        assert agent.tools == []
    finally:
        await lm.adelete()


YES_OR_NO = {
    "type": "object",
    "properties": {"answer": {"enum": ["yes", "no"]}},
    "required": ["answer"],
    "additionalProperties": False,
}


async def test_infer_config_grammar(runtime: ai.Runtime) -> None:
    """``LangModelInferConfig.grammar`` (Ailoy's): ``Grammar.JSONSchema`` constrains the
    reply to the schema (llama.cpp's grammar from ``output_schema``), ``Grammar.JSON`` to
    a JSON object; ``Grammar.Plain`` asks nothing."""
    lm = await ai.LangModel.new_local("SmolLM2-135M-Instruct", runtime=runtime)
    try:
        config = ai.LangModelInferConfig(
            grammar=ai.Grammar.JSONSchema(json.dumps(YES_OR_NO)), max_tokens=32
        )
        out = await lm.infer("Is the sea wet? Answer in JSON.", config=config)
        assert json.loads(out.message.text)["answer"] in ("yes", "no")
        config.grammar = ai.Grammar.JSON()
        out = await lm.infer("Describe the sea as JSON.", config=config)
        assert out.finish_reason == ai.FinishReason.Length() or isinstance(
            json.loads(out.message.text), dict
        )
        assert out.message.text.lstrip().startswith("{")
        assert ai.LangModelInferConfig(grammar=ai.Grammar.Plain()).infer_options() == {}
    finally:
        await lm.adelete()


def test_infer_config_grammar_refusals() -> None:
    """A regular expression or a context-free grammar is refused where it is set (ferrule
    constrains by JSON schema only), and so is a schema that is not JSON."""
    config = ai.LangModelInferConfig()
    for grammar in (ai.Grammar.Regex("[a-z]+"), ai.Grammar.CFG('root ::= "a"'), "json"):
        with pytest.raises(ai.InvalidInputError) as error:
            config.grammar = grammar
        assert [e["path"] for e in error.value.errors] == ["grammar"]
    assert config.grammar is None
    with pytest.raises(ai.InvalidInputError) as error:
        ai.Grammar.JSONSchema("{not json")
    assert [e["path"] for e in error.value.errors] == ["schema"]
