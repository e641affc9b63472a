"""Ailoy 0.2 `test_vectorstore.py` (Python) and `vectorstore.test.ts` (Node, its Python
calls): vectors embedded by ``BAAI/bge-m3`` (run as the offline MiniLM through
``$FERRULE_MODEL_ALIASES``, its vectors kept 1024 wide) in a FAISS store
(ferrule-faiss) and in a collection of a real Chroma server (ferrule-chroma), which this
module starts on a loopback port, as Ailoy's tests expect one on localhost:8000.

One test per Ailoy case, named after it, each run on both stores as Ailoy's are; then the
0.2 `Knowledge` made from such a store."""

from __future__ import annotations

from collections.abc import Iterator

import ferrule as ai
import pytest
from ferrule_chroma.testing import ChromaServer
from ferrule_kit.embeddings.vectors import DimensionMismatchError

STORES = ["faiss", "chroma"]


@pytest.fixture(scope="module")
def runtime() -> Iterator[ai.Runtime]:
    with ai.Runtime() as rt:
        yield rt


@pytest.fixture(scope="module")
def emb(runtime: ai.Runtime) -> ai.EmbeddingModel:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FERRULE_MODEL_ALIASES", "BAAI/bge-m3=all-MiniLM-L6-v2")
        return ai.EmbeddingModel.new_local_sync("BAAI/bge-m3", runtime=runtime)


@pytest.fixture(scope="module")
def chroma_server() -> Iterator[ChromaServer]:
    with ChromaServer() as server:
        yield server


@pytest.fixture(scope="module")
def faiss(runtime: ai.Runtime) -> ai.VectorStore:
    return ai.VectorStore.new_faiss(dim=1024, runtime=runtime)


@pytest.fixture(scope="module")
def chroma(runtime: ai.Runtime, chroma_server: ChromaServer) -> ai.VectorStore:
    return ai.VectorStore.new_chroma(
        url=chroma_server.url, collection_name="my_collection", runtime=runtime
    )


@pytest.fixture
def vs(request: pytest.FixtureRequest) -> Iterator[ai.VectorStore]:
    """The store named by the test's parameter, emptied before and after (as Ailoy's Node
    cases do with ``beforeEach`` / ``afterAll``)."""
    store: ai.VectorStore = request.getfixturevalue(request.param)
    store.clear()
    yield store
    store.clear()


@pytest.mark.parametrize("vs", STORES, indirect=True)
def test_vectorstore_operations(vs: ai.VectorStore, emb: ai.EmbeddingModel) -> None:
    doc0 = "Ailoy is an awesome library"
    input0 = ai.VectorStoreAddInput(
        embedding=emb.infer_sync(doc0), document=doc0, metadata={"topic": "Ailoy"}
    )
    doc1 = "Langchain is a library"
    input1 = ai.VectorStoreAddInput(
        embedding=emb.infer_sync(doc1), document=doc1, metadata={"topic": "Langchain"}
    )
    assert len(input0.embedding) == 1024  # bge-m3's width, kept by its stand-in

    id0 = vs.add_vector(input0)
    id1 = vs.add_vector(input1)
    assert vs.count() == 2

    got = vs.get_by_id(id0)
    assert got is not None
    assert got.id == id0
    assert got.document == input0.document
    assert got.metadata == input0.metadata
    assert got.embedding == input0.embedding

    results = vs.retrieve(emb.infer_sync("What is Ailoy?"), top_k=2)
    assert len(results) == 2
    assert results[0].id == id0
    assert results[0].distance < results[1].distance

    vs.remove_vector(id1)
    assert vs.count() == 1
    vs.clear()
    assert vs.count() == 0


@pytest.mark.parametrize("vs", STORES, indirect=True)
def test_add_get_remove_a_single_input(vs: ai.VectorStore, emb: ai.EmbeddingModel) -> None:
    document = "What is your name?"
    embedding = emb.infer_sync(document)
    id = vs.add_vector(ai.VectorStoreAddInput(embedding=embedding, document=document))

    got = vs.get_by_id(id)
    assert got is not None
    assert (got.id, got.document, got.embedding) == (id, document, embedding)
    assert got.metadata is None
    assert vs.count() == 1

    vs.remove_vector(id)
    assert vs.count() == 0
    assert vs.get_by_id(id) is None


@pytest.mark.parametrize("vs", STORES, indirect=True)
def test_add_get_remove_multiple_inputs(vs: ai.VectorStore, emb: ai.EmbeddingModel) -> None:
    emb0, emb1 = emb.infer_sync("document0"), emb.infer_sync("document1")
    ids = vs.add_vectors(
        [
            ai.VectorStoreAddInput(embedding=emb0, document="document0"),
            ai.VectorStoreAddInput(embedding=emb1, document="document1"),
        ]
    )
    assert len(ids) == 2

    got = vs.get_by_ids(ids)
    assert [(g.id, g.document, g.embedding) for g in got] == [
        (ids[0], "document0", emb0),
        (ids[1], "document1", emb1),
    ]
    assert vs.count() == 2

    vs.remove_vectors(ids)
    assert vs.count() == 0


@pytest.mark.parametrize("vs", STORES, indirect=True)
def test_retrieve_results_for_a_single_query(vs: ai.VectorStore, emb: ai.EmbeddingModel) -> None:
    docs = ["Ailoy is an awesome library", "Langchain is a library"]
    ids = vs.add_vectors(
        [ai.VectorStoreAddInput(embedding=emb.infer_sync(d), document=d) for d in docs]
    )
    results = vs.retrieve(emb.infer_sync("What is Ailoy?"), 2)
    assert [r.id for r in results] == ids  # the query is about Ailoy: the first input
    assert results[0].distance < results[1].distance
    assert [r.document for r in results] == docs


@pytest.mark.parametrize("vs", STORES, indirect=True)
def test_retrieve_batch_results_for_multiple_queries(
    vs: ai.VectorStore, emb: ai.EmbeddingModel
) -> None:
    docs = [
        "BGE M3 is an embedding model supporting dense retrieval, lexical matching and "
        "multi-vector interaction.",
        "BM25 is a bag-of-words retrieval function that ranks a set of documents based on "
        "the query terms appearing in each document",
    ]
    ids = vs.add_vectors(
        [ai.VectorStoreAddInput(embedding=emb.infer_sync(d), document=d) for d in docs]
    )
    queries = [emb.infer_sync("What is BGE-M3?"), emb.infer_sync("Defination of BM25")]
    results = vs.batch_retrieve(queries, 2)
    assert len(results) == 2 and all(len(r) == 2 for r in results)
    assert results[0][0].id == ids[0] and results[0][0].distance < results[0][1].distance
    assert results[1][0].id == ids[1] and results[1][0].distance < results[1][1].distance


# -- beyond Ailoy's cases: what the names must also do ---------------------------------------


@pytest.mark.parametrize("vs", STORES, indirect=True)
def test_a_vector_of_another_width_is_refused(vs: ai.VectorStore) -> None:
    with pytest.raises(DimensionMismatchError):
        vs.add_vector(ai.VectorStoreAddInput(embedding=[0.1] * 384, document="narrow"))
    assert vs.count() == 0


def test_chroma_data_outlives_the_store_object(
    runtime: ai.Runtime, chroma_server: ChromaServer, emb: ai.EmbeddingModel
) -> None:
    first = ai.VectorStore.new_chroma(chroma_server.url, "kept", runtime=runtime)
    kept = first.add_vector(ai.VectorStoreAddInput(emb.infer_sync("a harbour"), "a harbour"))
    first.delete()
    again = ai.VectorStore.new_chroma(chroma_server.url, "kept", runtime=runtime)
    assert again.get_by_id(kept) is not None and again.count() == 1
    again.delete()


def test_new_chroma_without_a_server_raises_runtime_error(runtime: ai.Runtime) -> None:
    # Ailoy's test skips Chroma on RuntimeError: nothing answers on a fresh port
    server = ChromaServer()
    with pytest.raises(RuntimeError, match="no Chroma server answers"):
        ai.VectorStore.new_chroma("http://127.0.0.1:9", "nobody", runtime=runtime)
    assert server.url == ""


@pytest.mark.parametrize("vs", STORES, indirect=True)
async def test_knowledge_new_vector_store(vs: ai.VectorStore, emb: ai.EmbeddingModel) -> None:
    """Ailoy's `Knowledge.new_vector_store(vs, emb)` (its agent tests' knowledge) is
    ferrule's Knowledge over the same store (its metric too: Chroma's is L2): it finds
    what was added as vectors."""
    doc0 = "Ailoy is an awesome AI agent framework supporting Rust, Python, Nodejs and WebAssembly."
    vs.add_vector(ai.VectorStoreAddInput(embedding=await emb.infer(doc0), document=doc0))
    vs.add_vector(
        ai.VectorStoreAddInput(
            embedding=await emb.infer("The ferry leaves at nine."),
            document="The ferry leaves at nine.",
        )
    )
    knowledge = ai.Knowledge.new_vector_store(vs, emb)
    assert isinstance(knowledge, ai.Knowledge)
    found = await knowledge.asearch("What is Ailoy?", max_results=1)
    assert [d.content for d in found] == [doc0]
    knowledge.close()
    assert vs.count() == 2  # the knowledge used the store, did not own it


async def test_embedding_model_new_local_options(runtime: ai.Runtime) -> None:
    """``new_local``'s options: the progress callback told the model is ready, a GPU
    ``device_id`` refused (ferrule's local embedders run on the CPU), and an id that is no
    alias gets the model's own width."""
    steps: list[ai.CacheProgress] = []
    model = await ai.EmbeddingModel.new_local(
        "all-MiniLM-L6-v2", progress_callback=steps.append, runtime=runtime
    )
    assert steps == [ai.CacheProgress("Initialized", 1, 1)]
    assert model.dimension == 384 and len(await model.infer("harbour")) == 384
    await model.adelete()
    with pytest.raises(ai.InvalidInputError) as error:
        await ai.EmbeddingModel.new_local("all-MiniLM-L6-v2", device_id=1, runtime=runtime)
    assert [e["path"] for e in error.value.errors] == ["device_id"]


def test_embedding_model_download(runtime: ai.Runtime) -> None:
    """Ailoy's ``download``: the packaged weights are loaded once (and released), and an id
    no installed plugin serves is refused."""
    steps: list[ai.CacheProgress] = []
    before = runtime.kernel.components()
    ai.EmbeddingModel.download("all-MiniLM-L6-v2", steps.append, runtime=runtime)
    assert steps == [ai.CacheProgress("all-MiniLM-L6-v2 ready", 1, 1)]
    assert runtime.kernel.components() == before
    with pytest.raises(ai.FerruleError, match="no installed plugin serves"):
        ai.EmbeddingModel.download("no/such-embedder", runtime=runtime)
