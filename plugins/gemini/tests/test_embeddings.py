"""`gemini_embedder` against a loopback server that checks every request against the
documented ``batchEmbedContents`` shape and answers with vectors derived from each text."""

from __future__ import annotations

import hashlib
import math
import random
import re
from typing import Any

import pytest
from ferrule import AsyncRuntime
from ferrule_kit.errors import ProviderConnectionError, RateLimitError
from ferrule_kit.testing.embedding import EmbedderConformance, LoopbackEmbedder
from ferrule_kit.testing.loopback import (
    LoopbackServer,
    RecordedRequest,
    Reply,
    all_of,
    json_schema_validator,
    server_fixture,
)

KEY = "AIzaSyLOOPBACK-embeddings-0123456789abcdef"
PATH = re.compile(r"^/v1beta/models/(?P<model>[A-Za-z0-9._-]+):batchEmbedContents$")

#: The documented request (Gemini API reference, models.batchEmbedContents / EmbedContentRequest).
REQUEST_SCHEMA = {
    "type": "object",
    "required": ["requests"],
    "additionalProperties": False,
    "properties": {
        "requests": {
            "type": "array",
            "minItems": 1,
            "maxItems": 100,
            "items": {
                "type": "object",
                "required": ["model", "content"],
                "additionalProperties": False,
                "properties": {
                    "model": {"type": "string", "pattern": "^models/"},
                    "content": {
                        "type": "object",
                        "required": ["parts"],
                        "properties": {
                            "parts": {
                                "type": "array",
                                "minItems": 1,
                                "items": {
                                    "type": "object",
                                    "required": ["text"],
                                    "additionalProperties": False,
                                    "properties": {"text": {"type": "string", "minLength": 1}},
                                },
                            },
                            "role": {"type": "string"},
                        },
                    },
                    "taskType": {
                        "enum": [
                            "TASK_TYPE_UNSPECIFIED",
                            "RETRIEVAL_QUERY",
                            "RETRIEVAL_DOCUMENT",
                            "SEMANTIC_SIMILARITY",
                            "CLASSIFICATION",
                            "CLUSTERING",
                            "QUESTION_ANSWERING",
                            "FACT_VERIFICATION",
                            "CODE_RETRIEVAL_QUERY",
                        ]
                    },
                    "title": {"type": "string"},
                    "outputDimensionality": {"type": "integer", "minimum": 1},
                },
            },
        }
    },
}


def _request_line(request: RecordedRequest) -> list[str]:
    problems = []
    match = PATH.match(request.path)
    if request.method != "POST" or match is None:
        problems.append(f"expected POST .../models/M:batchEmbedContents, got {request.path}")
    if request.query:
        problems.append(f"no query parameters (the key goes in a header): {request.query}")
    if request.headers.get("x-goog-api-key") != KEY:
        problems.append("the key must travel in x-goog-api-key")
    body = request.json or {}
    if match is not None:
        for item in body.get("requests", []):
            if item.get("model") != f"models/{match.group('model')}":
                problems.append("each request's model must be the URL's model")
    return problems


validator = all_of(_request_line, json_schema_validator(REQUEST_SCHEMA))


def fake_vector(text: str, task: str, dimension: int) -> list[float]:
    """What the server answers: not unit length (as Gemini's truncated vectors are not)."""
    rng = random.Random(hashlib.sha256(f"{task}:{text}".encode()).digest())
    return [rng.gauss(0, 1) for _ in range(dimension)]


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def answer(dimension: int = 6) -> Any:
    def reply(request: RecordedRequest) -> Reply:
        embeddings = []
        for item in request.json["requests"]:
            size = item.get("outputDimensionality", dimension)
            text = item["content"]["parts"][0]["text"]
            embeddings.append({"values": fake_vector(text, item["taskType"], size)})
        return Reply.json({"embeddings": embeddings})

    return reply


server = server_fixture(validator)
define = LoopbackEmbedder(
    AsyncRuntime, "gemini_embedder", "/v1beta", {"api_key": KEY, "model": "my-embedder"}
)


class TestGeminiEmbedderConformance(EmbedderConformance):
    @pytest.fixture
    async def embedder(self, server):
        async with define.under_test(server, answer, max_batch=40) as embedder:
            yield embedder


async def test_task_types_batches_and_order(server) -> None:
    server.script(*[answer() for _ in range(4)])
    texts = [f"passage {i}" for i in range(7)]
    async with define(server, max_batch=3) as rt:
        docs = await rt.call_method("emb", "embed", {"texts": texts})
        query = await rt.call_method("emb", "embed", {"texts": ["q"], "input_type": "query"})
    assert [len(r.json["requests"]) for r in server.requests] == [3, 3, 1, 1]
    assert {i["taskType"] for r in server.requests[:3] for i in r.json["requests"]} == {
        "RETRIEVAL_DOCUMENT"
    }
    assert server.requests[3].json["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    assert docs["vectors"] == [
        pytest.approx(unit(fake_vector(t, "RETRIEVAL_DOCUMENT", 6))) for t in texts
    ]
    assert query["vectors"][0] == pytest.approx(unit(fake_vector("q", "RETRIEVAL_QUERY", 6)))
    assert docs["usage"] == {"input_tokens": 0}


async def test_dimensions_are_sent_as_output_dimensionality_and_vectors_are_unit_length(
    server,
) -> None:
    server.script(answer())
    async with define(server, model="gemini-embedding-001", dimensions=768) as rt:
        assert (await rt.call_method("emb", "info", {}))["dimension"] == 768  # no request
        out = await rt.call_method("emb", "embed", {"texts": ["x"]})
    assert server.requests[0].json["requests"][0]["outputDimensionality"] == 768
    assert math.isclose(math.sqrt(sum(x * x for x in out["vectors"][0])), 1.0, rel_tol=1e-9)


async def test_quota_retry_delay_and_typed_errors(server) -> None:
    busy = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0s"}],
        }
    }
    server.script(Reply.json(busy, 429), answer(), Reply.json(busy, 429), Reply.json(busy, 429))
    async with define(server, max_retries=1) as rt:
        out = await rt.call_method("emb", "embed", {"texts": ["x"]})
        assert len(out["vectors"]) == 1, "retried after the 429"
        with pytest.raises(RateLimitError) as error:
            await rt.call_method("emb", "embed", {"texts": ["y"]})
    assert error.value.details["provider"] == "gemini" and KEY not in str(error.value)


async def test_a_server_that_is_down_gives_one_typed_error() -> None:
    async with LoopbackServer() as down:
        url = down.url
    async with AsyncRuntime() as rt:
        await rt.define(
            "gemini_embedder", "emb", {"api_key": KEY, "base_url": url, "max_retries": 0}
        )
        with pytest.raises(ProviderConnectionError) as error:
            await rt.call_method("emb", "embed", {"texts": ["x"]})
    assert error.value.details["provider"] == "gemini"


async def test_a_title_goes_with_documents_and_a_task_type_given_with_every_text(server) -> None:
    server.script(*[answer() for _ in range(4)])
    async with define(server, title="Harbour guide") as rt:
        await rt.call_method("emb", "embed", {"texts": ["tides"]})
        await rt.call_method("emb", "embed", {"texts": ["q"], "input_type": "query"})
        await rt.define(
            "gemini_embedder",
            "similar",
            {
                "api_key": KEY,
                "base_url": server.url + "/v1beta",
                "model": "my-embedder",
                "task_type": "SEMANTIC_SIMILARITY",
                "title": "Harbour guide",
                "extra_body": {"taskType": "CLUSTERING"},  # the component's own fields win
            },
        )
        docs = await rt.call_method("similar", "embed", {"texts": ["tides"]})
        await rt.call_method("similar", "embed", {"texts": ["q"], "input_type": "query"})
    sent = [r.json["requests"][0] for r in server.requests]
    # Gemini reads a title for RETRIEVAL_DOCUMENT texts only
    assert (sent[0]["taskType"], sent[0]["title"]) == ("RETRIEVAL_DOCUMENT", "Harbour guide")
    assert sent[1]["taskType"] == "RETRIEVAL_QUERY" and "title" not in sent[1]
    assert [s["taskType"] for s in sent[2:]] == ["SEMANTIC_SIMILARITY"] * 2
    assert not any("title" in s for s in sent[2:])
    assert docs["vectors"][0] == pytest.approx(unit(fake_vector("tides", "SEMANTIC_SIMILARITY", 6)))
