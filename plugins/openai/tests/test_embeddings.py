"""`openai_embedder` against a loopback server that checks every request against the
documented ``POST /v1/embeddings`` shape and answers with vectors derived from each text."""

from __future__ import annotations

import base64
import hashlib
import random
import struct
from typing import Any

import pytest
from ferrule import AsyncRuntime
from ferrule_kit.embeddings.embedding import EmbedderUnavailableError
from ferrule_kit.errors import AuthenticationError, ProviderConnectionError, RateLimitError
from ferrule_kit.testing.embedding import EmbedderConformance, LoopbackEmbedder
from ferrule_kit.testing.loopback import (
    LoopbackServer,
    RecordedRequest,
    Reply,
    all_of,
    json_schema_validator,
    server_fixture,
)

KEY = "sk-loopback-embeddings-0123456789"

#: The documented request body (OpenAI's API reference, "Create embeddings").
REQUEST_SCHEMA = {
    "type": "object",
    "required": ["model", "input"],
    "additionalProperties": False,
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "input": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2048,
            "items": {"type": "string", "minLength": 1},
        },
        "encoding_format": {"enum": ["float", "base64"]},
        "dimensions": {"type": "integer", "minimum": 1},
        "user": {"type": "string"},
    },
}


def _headers(request: RecordedRequest) -> list[str]:
    problems = []
    if request.method != "POST" or request.path != "/v1/embeddings":
        problems.append(f"expected POST /v1/embeddings, got {request.method} {request.path}")
    if request.headers.get("content-type", "").split(";")[0] != "application/json":
        problems.append("content-type must be application/json")
    auth = request.headers.get("authorization")
    if auth is not None and auth != f"Bearer {KEY}":
        problems.append(f"unexpected authorization header {auth!r}")
    return problems


validator = all_of(_headers, json_schema_validator(REQUEST_SCHEMA))


def fake_vector(text: str, dimension: int) -> list[float]:
    rng = random.Random(hashlib.sha256(text.encode()).digest())
    vector = [rng.gauss(0, 1) for _ in range(dimension)]
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector]


def answer(dimension: int = 8, *, shuffle: bool = True) -> Any:
    """A reply builder: one vector per input, in ``data`` order shuffled (the API gives each
    an ``index``), float or base64 as asked."""

    def reply(request: RecordedRequest) -> Reply:
        body = request.json
        data = []
        for index, text in enumerate(body["input"]):
            vector = fake_vector(text, body.get("dimensions", dimension))
            if body.get("encoding_format") == "base64":
                encoded: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            else:
                encoded = vector
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        if shuffle:
            random.Random(len(data)).shuffle(data)
        tokens = sum(len(t.split()) for t in body["input"])
        return Reply.json(
            {
                "object": "list",
                "model": body["model"],
                "data": data,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    return reply


server = server_fixture(validator)
define = LoopbackEmbedder(
    AsyncRuntime, "openai_embedder", "/v1", {"api_key": KEY, "model": "text-embedding-3-small"}
)


class TestOpenAIEmbedderConformance(EmbedderConformance):
    @pytest.fixture
    async def embedder(self, server):
        async with define.under_test(server, answer, max_batch=50) as embedder:
            yield embedder


async def test_batches_keep_order_and_count_usage(server) -> None:
    server.script(*[answer() for _ in range(3)])
    texts = [f"text {i}" for i in range(25)]
    async with define(server, max_batch=10) as rt:
        out = await rt.call_method("emb", "embed", {"texts": texts})
    assert [len(r.json["input"]) for r in server.requests] == [10, 10, 5]
    assert out["vectors"] == [pytest.approx(fake_vector(t, 8)) for t in texts]
    assert out["usage"] == {"input_tokens": 50}
    assert out["model"] == "text-embedding-3-small" and out["dimension"] == 8


async def test_base64_and_dimensions(server) -> None:
    server.script(answer())
    async with define(server, encoding_format="base64", dimensions=16) as rt:
        out = await rt.call_method("emb", "embed", {"texts": ["a", "b"], "input_type": "query"})
        info = await rt.call_method("emb", "info", {})
    body = server.requests[0].json
    assert body["encoding_format"] == "base64" and body["dimensions"] == 16
    assert out["vectors"][1] == pytest.approx(fake_vector("b", 16), abs=1e-6)
    assert info["dimension"] == 16 and len(server.requests) == 1, "info needed no request"


async def test_unknown_model_info_probes_once(server) -> None:
    server.script(answer(dimension=5))
    async with define(server, model="nomic-embed-text") as rt:
        assert (await rt.call_method("emb", "info", {}))["dimension"] == 5
        assert (await rt.call_method("emb", "info", {}))["dimension"] == 5
    assert len(server.requests) == 1


async def test_compatible_server_never_gets_the_environment_key(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    server.script(answer())
    async with AsyncRuntime() as rt:
        await rt.define("openai_embedder", "emb", {"base_url": server.url + "/v1"})
        await rt.call_method("emb", "embed", {"texts": ["x"]})
    assert "authorization" not in server.requests[0].headers


async def test_errors_are_typed_and_name_the_provider(server) -> None:
    server.script(
        Reply.json({"error": {"message": f"bad key {KEY}", "type": "invalid_request_error"}}, 401),
        *[Reply.json({"error": {"message": "slow down"}}, 429, {"retry-after": "0"})] * 2,
        Reply.json({"object": "list", "data": [{"index": 0, "embedding": [1.0, 2.0]}]}),
    )
    async with define(server, max_retries=1) as rt:
        with pytest.raises(AuthenticationError) as error:
            await rt.call_method("emb", "embed", {"texts": ["x"]})
        assert (
            KEY not in str(error.value) and error.value.details["provider"] == "openai-compatible"
        )
        with pytest.raises(RateLimitError):
            await rt.call_method("emb", "embed", {"texts": ["x"]})
        with pytest.raises(EmbedderUnavailableError, match="returned 1 vectors for 2 texts"):
            await rt.call_method("emb", "embed", {"texts": ["x", "y"]})


async def test_a_server_that_is_down_gives_one_typed_error() -> None:
    async with LoopbackServer() as down:
        url = down.url
    async with AsyncRuntime() as rt:
        await rt.define("openai_embedder", "emb", {"base_url": url + "/v1", "max_retries": 0})
        with pytest.raises(ProviderConnectionError) as error:
            await rt.call_method("emb", "embed", {"texts": ["x"]})
    assert error.value.details["provider"] == "openai-compatible"


async def test_extra_body_fields_go_with_each_request_but_never_replace_its_own(server) -> None:
    server.script(answer(), answer())
    async with define(server, max_batch=1, extra_body={"user": "u-7", "model": "other"}) as rt:
        await rt.call_method("emb", "embed", {"texts": ["a", "b"]})
    bodies = [r.json for r in server.requests]
    assert [b["user"] for b in bodies] == ["u-7", "u-7"]
    assert [(b["model"], b["input"]) for b in bodies] == [
        ("text-embedding-3-small", ["a"]),
        ("text-embedding-3-small", ["b"]),
    ]
