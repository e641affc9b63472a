"""Ailoy 0.2.5's tutorial/rag-using-documents, as programs: an `EmbeddingModel` (bge-m3's
id, the offline MiniLM by alias), a 1024-wide FAISS `VectorStore` filled with
``add_vector(VectorStoreAddInput(embedding, chunk, metadata))``, ``Knowledge.new_vector_store``,
``Agent(lm, knowledge=...)`` and ``agent.run(question, config)`` with Qwen3's document
polyfill, each part made under its own ``asyncio.run`` as the guide does. The chunks are
our own short story, not the guide's."""

from __future__ import annotations

import asyncio

import ferrule as ai
import pytest

from .conftest import Script

CHUNKS = [
    """
Mara kept the lighthouse on Holm for thirty years. Her nephew Tobias rowed out each
Sunday with bread and oil, until the winter his father forbade it: the crossing had
grown too dangerous for a boy after the storm took the jetty.
""",
    """
The lamp of the lighthouse burned whale oil until 1911, then paraffin. Mara trimmed its
wick at dusk and at midnight, and wrote the weather in a green ledger.
""",
    """
In spring the ferry to Holm ran again, and Tobias came back with a new jetty plank
tied across his shoulders, grinning.
""",
]
QUESTION = "Why did the boy stop rowing to the lighthouse on Sundays?"


async def prepare_knowledge() -> ai.Knowledge:
    model = await ai.EmbeddingModel.new_local("BAAI/bge-m3")
    vs = ai.VectorStore.new_faiss(1024)
    for i, chunk in enumerate(CHUNKS):
        embedding = await model.infer(chunk)
        vs.add_vector(ai.VectorStoreAddInput(embedding, chunk, {"title": "Holm", "index": i}))
    return ai.Knowledge.new_vector_store(vs, model)


def test_prepare_knowledge_steps(capsys: pytest.CaptureFixture[str]) -> None:
    """The guide's first steps: ``EmbeddingModel.new_local(model_name=, progress_callback=
    print)`` and ``VectorStore.new_faiss(dim=1024)``; bge-m3's vectors are 1024 wide."""

    async def steps() -> tuple[ai.EmbeddingModel, ai.VectorStore]:
        model = await ai.EmbeddingModel.new_local(model_name="BAAI/bge-m3", progress_callback=print)
        vs = ai.VectorStore.new_faiss(dim=1024)
        return model, vs

    model, vs = asyncio.run(steps())
    assert "Initialized" in capsys.readouterr().out
    vector = model.infer_sync(CHUNKS[0])
    assert len(vector) == 1024
    vs.add_vector(ai.VectorStoreAddInput(vector, CHUNKS[0], {"title": "Holm", "index": 0}))
    (found,) = vs.retrieve(vector, 1)
    assert (found.document, found.metadata) == (CHUNKS[0], {"title": "Holm", "index": 0})


def test_rag_with_polyfill_reaches_the_model() -> None:
    """The guide's whole program, its knowledge made under one ``asyncio.run`` and used
    under another: with ``document_polyfill`` "Qwen3" and ``top_k`` 1 the model is given
    the nearest chunk after the question and a Knowledges section in the system message;
    the answer is printed as the guide prints it."""
    script = Script(["Because his father forbade it after the storm."])
    printed: list[str] = []

    async def main(knowledge: ai.Knowledge) -> None:
        agent = ai.Agent(await ai.LangModel.new(script.model()), knowledge=knowledge)
        config = ai.AgentConfig.from_dict(
            {"inference": {"document_polyfill": "Qwen3"}, "knowledge": {"top_k": 1}}
        )
        async for resp in agent.run(QUESTION, config):
            printed.append(resp.message.contents[0].text)

    knowledge = asyncio.run(prepare_knowledge())
    asyncio.run(main(knowledge))
    assert printed == ["Because his father forbade it after the storm."]
    system, user = script.seen()
    assert system.role == "system" and "# Knowledges" in system.text
    assert user.text.startswith(QUESTION + "<documents>\n<document>\n")
    assert CHUNKS[0] in user.text  # the nearest chunk, given whole
    assert CHUNKS[1] not in user.text and CHUNKS[2] not in user.text  # top_k 1


def test_rag_default_top_k_and_more_documents() -> None:
    """Without a ``knowledge`` config the nearest document only (Ailoy's default top_k of
    1); ``{"knowledge": {"top_k": 2}}`` gives two, the nearest first."""
    script = Script(["One.", "Two."])

    async def main(knowledge: ai.Knowledge) -> None:
        agent = ai.Agent(await ai.LangModel.new(script.model()), knowledge=knowledge)
        default = ai.AgentConfig.from_dict({"inference": {"document_polyfill": "Qwen3"}})
        [_ async for _ in agent.run(QUESTION, default)]
        more = ai.AgentConfig.from_dict(
            {"inference": {"document_polyfill": "Qwen3"}, "knowledge": {"top_k": 2}}
        )
        [_ async for _ in agent.run(QUESTION, more)]

    asyncio.run(main(asyncio.run(prepare_knowledge())))
    first, second = script.seen(0)[-1].text, script.seen(1)[-1].text
    assert first.count("<document>") == 1 and CHUNKS[0] in first
    assert second.count("<document>") == 2
    assert second.index(CHUNKS[0]) < second.index(CHUNKS[1])  # the nearest first
    assert CHUNKS[2] not in second


def test_rag_on_the_local_model(capsys: pytest.CaptureFixture[str]) -> None:
    """The same program on the local model (Qwen3-0.6B's id, the offline SmolLM2): it
    answers, printed as the guide prints it (a 135M model's answer is not checked for
    sense; what reached a model is checked above)."""

    async def main(knowledge: ai.Knowledge) -> None:
        agent = ai.Agent(
            await ai.LangModel.new_local("Qwen/Qwen3-0.6B"),
            knowledge=knowledge,
        )
        config = ai.AgentConfig.from_dict(
            {"inference": {"document_polyfill": "Qwen3", "max_tokens": 32}}
        )
        async for resp in agent.run(QUESTION, config):
            print(resp.message.contents[0].text)

    knowledge = asyncio.run(prepare_knowledge())
    asyncio.run(main(knowledge))
    assert capsys.readouterr().out.strip()
