"""Agno's embedders on ferrule: `OpenAIEmbedder` and `GeminiEmbedder` against loopback
servers speaking each API's embeddings wire, `SentenceTransformerEmbedder` on the offline
MiniLM. Their own methods (`get_embedding`, `get_embedding_and_usage`, the async batch)
embed through the components, sending Agno's settings (``user``, ``request_params``,
``task_type``, ``title``, ``prompt``, ``enable_batch`` / ``batch_size``); the SDK clients
and Vertex AI are refused naming the keyword."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import pytest
from ferrule.knowledge.embedder import MiniLMEmbedder
from ferrule.knowledge.embedder.google import GeminiEmbedder
from ferrule.knowledge.embedder.openai import OpenAIEmbedder
from ferrule.knowledge.embedder.sentence_transformer import SentenceTransformerEmbedder
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing.loopback import LoopbackServer, RecordedRequest, Reply

KEY = "sk-embedders-0123456789"


def vector_of(text: str, size: int) -> list[float]:
    """A unit vector that differs by text (what the loopback servers answer)."""
    raw = [float((ord(c) * (i + 3)) % 17 + 1) for i, c in enumerate((text * size)[:size])]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


def openai_answer(request: RecordedRequest) -> Reply:
    body = request.json
    data = [
        {"object": "embedding", "index": i, "embedding": vector_of(t, body["dimensions"])}
        for i, t in enumerate(body["input"])
    ]
    tokens = sum(len(t.split()) for t in body["input"])
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return Reply.json({"object": "list", "model": body["model"], "data": data, "usage": usage})


def gemini_answer(request: RecordedRequest) -> Reply:
    embeddings = [
        {"values": vector_of(item["content"]["parts"][0]["text"], item["outputDimensionality"])}
        for item in request.json["requests"]
    ]
    return Reply.json({"embeddings": embeddings})


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:  # served from a thread of its own
        yield server


def test_openai_embedder_sends_agnos_settings_and_reports_openais_usage(server: Any) -> None:
    server.script(*[openai_answer] * 4)
    embedder = OpenAIEmbedder(
        dimensions=4,
        api_key=KEY,
        base_url=server.url + "/v1",
        user="u-7",
        request_params={"service_tier": "flex"},
    )
    vector, usage = embedder.get_embedding_and_usage("tide tables")
    assert vector == pytest.approx(vector_of("tide tables", 4))
    assert usage == {"prompt_tokens": 2, "total_tokens": 2}
    body = server.requests[0].json
    assert (body["model"], body["input"], body["dimensions"]) == (
        "text-embedding-3-small",
        ["tide tables"],
        4,
    )
    assert (body["user"], body["service_tier"]) == ("u-7", "flex")
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    response = embedder.response("ferry")
    assert response.data[0].embedding == pytest.approx(vector_of("ferry", 4))
    assert response.usage is not None and response.usage.total_tokens == 1
    assert embedder.get_embedding("bread") == pytest.approx(vector_of("bread", 4))


def test_enable_batch_sends_batch_size_texts_a_request(server: Any) -> None:
    server.script(*[openai_answer] * 2)
    batched = OpenAIEmbedder(
        dimensions=4, api_key=KEY, base_url=server.url + "/v1", enable_batch=True, batch_size=2
    )
    texts = ["a b", "c", "d e f g"]
    vectors, usages = asyncio.run(batched.async_get_embeddings_batch_and_usage(texts))
    assert [r.json["input"] for r in server.requests] == [["a b", "c"], ["d e f g"]]
    assert vectors == [pytest.approx(vector_of(t, 4)) for t in texts]
    # each text reports its request's usage, as Agno's batch does
    assert usages == [{"prompt_tokens": 3, "total_tokens": 3}] * 2 + [
        {"prompt_tokens": 4, "total_tokens": 4}
    ]


def test_gemini_embedder_embeds_queries_by_its_task_type(server: Any) -> None:
    server.script(*[gemini_answer] * 2)
    base = server.url + "/v1beta"
    plain = GeminiEmbedder(dimensions=4, api_key=KEY, base_url=base)
    assert plain.get_embedding("tides") == pytest.approx(vector_of("tides", 4))
    similar = GeminiEmbedder(
        dimensions=4, api_key=KEY, base_url=base, task_type="SEMANTIC_SIMILARITY"
    )
    vector, usage = similar.get_embedding_and_usage("tides")
    assert vector == pytest.approx(vector_of("tides", 4)) and usage is None
    first, second = (r.json["requests"][0] for r in server.requests)
    assert (first["taskType"], first["outputDimensionality"]) == ("RETRIEVAL_QUERY", 4)
    assert first["model"] == "models/gemini-embedding-001"
    assert second["taskType"] == "SEMANTIC_SIMILARITY"
    assert all(r.headers["x-goog-api-key"] == KEY for r in server.requests)


def test_sentence_transformer_embedder_puts_its_prompt_first() -> None:
    prompted = SentenceTransformerEmbedder(prompt="query: ")
    vector = prompted.get_embedding("rye bread")
    assert vector == pytest.approx(MiniLMEmbedder().get_embedding("query: rye bread"), abs=1e-5)
    assert vector != pytest.approx(MiniLMEmbedder().get_embedding("rye bread"), abs=1e-3)
    assert len(vector) == 384 and prompted.get_embedding_and_usage("x")[1] is None


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: OpenAIEmbedder(openai_client=object()), "openai_client"),
        (lambda: OpenAIEmbedder(client_params={"timeout": 3}), "client_params"),
        (lambda: OpenAIEmbedder().client, "client"),
        (lambda: OpenAIEmbedder().aclient, "aclient"),
        (lambda: OpenAIEmbedder(encoding_format="int8"), "encoding_format"),
        (lambda: GeminiEmbedder(vertexai=True), "vertexai"),
        (lambda: GeminiEmbedder(gemini_client=object()), "gemini_client"),
        (lambda: GeminiEmbedder().aclient, "aclient"),
        (lambda: SentenceTransformerEmbedder(id="all-mpnet-base-v2"), "id"),
        (
            lambda: SentenceTransformerEmbedder(sentence_transformer_client=object()),
            "sentence_transformer_client",
        ),
        (lambda: OpenAIEmbedder(batch_size=0), "batch_size"),
        (lambda: OpenAIEmbedder().get_embedding(3), "text"),
    ],
)
def test_what_ferrule_does_not_take_is_refused_naming_it(make: Any, field: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        make()
    assert raised.value.errors[0]["path"] == field
