"""`/v1/embeddings` of `ferrule serve`, driven by the official `openai` client against a
real server on a loopback port, on the offline embedder (ferrule-minilm) and on small
embedder components of this file; and the ``ferrule_resolve_embedder`` hook that routes
embedding model ids (`ferrule.models.route_embedder`)."""

from __future__ import annotations

import array
import base64
import json
import math
import urllib.error
import urllib.request
from collections.abc import Iterator

import attrs
import openai
import pytest
from ferrule import Runtime
from ferrule.models import route_embedder
from ferrule.runtime import new_kernel
from ferrule.server import ServerThread
from ferrule_kernel import Kernel, hookimpl
from ferrule_kit import kit_plugin
from ferrule_kit.embeddings.embedding import EmbeddingUsage, EmbedInput, EmbedOutput, embedder_type
from ferrule_kit.errors import RateLimitError, UnknownModelError
from ferrule_kit.models.lmspec import ModelRoute
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.timeout(120)

TOKEN = "embeddings-test-token-0123456789"


@attrs.frozen
class NoAttributes:
    pass


class CountingEmbedder:
    """Embeds a text as (its length, its word count, 1): easy to check, in order."""

    def __init__(self, attributes: NoAttributes) -> None:
        pass

    def embed(self, inputs: EmbedInput) -> dict:
        vectors = [[float(len(t)), float(len(t.split())), 1.0] for t in inputs.texts]
        usage = EmbeddingUsage(sum(len(t.split()) for t in inputs.texts))
        return EmbedOutput(vectors, 3, "counting", usage).to_dict()

    def info(self, inputs: object) -> dict:
        return {"model": "counting", "dimension": 3, "max_batch": 16}


class ThrottledEmbedder:
    def __init__(self, attributes: NoAttributes) -> None:
        pass

    def embed(self, inputs: EmbedInput) -> dict:
        raise RateLimitError("slow down", provider="throttled", status=429)

    def info(self, inputs: object) -> dict:
        return {"model": "throttled", "dimension": 3, "max_batch": 16}


class EmbeddersPlugin:
    @hookimpl
    def ferrule_register_component_types(self):
        return [
            embedder_type("counting_embedder", CountingEmbedder, NoAttributes),
            embedder_type("throttled_embedder", ThrottledEmbedder, NoAttributes),
        ]

    @hookimpl
    def ferrule_resolve_embedder(self, model_id: str, provider: str | None):
        types = {"counting": "counting_embedder", "throttled": "throttled_embedder"}
        return ModelRoute(types[model_id]) if model_id in types else None


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Kernel]]:
    kernel = Kernel(plugins=[kit_plugin, EmbeddersPlugin()])
    with ServerThread(kernel, token=TOKEN) as url:
        yield url, kernel


@pytest.fixture(scope="module")
def client(server) -> openai.OpenAI:
    url, _ = server
    return openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0)


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_embeddings_in_order_with_usage(client):
    reply = client.embeddings.create(
        model="counting", input=["one", "two words", "and three words"]
    )
    assert (reply.object, reply.model) == ("list", "counting")
    assert [d.index for d in reply.data] == [0, 1, 2]
    assert all(d.object == "embedding" for d in reply.data)
    assert [d.embedding for d in reply.data] == [
        [3.0, 1.0, 1.0],
        [9.0, 2.0, 1.0],
        [15.0, 3.0, 1.0],
    ]
    assert (reply.usage.prompt_tokens, reply.usage.total_tokens) == (6, 6)
    [single] = client.embeddings.create(model="counting", input="alone").data
    assert single.embedding == [5.0, 1.0, 1.0]


def test_base64_vectors_are_little_endian_float32(client):
    reply = client.embeddings.create(
        model="counting", input=["one", "two words"], encoding_format="base64"
    )
    decoded = []
    for item in reply.data:
        values = array.array("f")
        values.frombytes(base64.b64decode(item.embedding))
        decoded.append(list(values))
    assert decoded == [[3.0, 1.0, 1.0], [9.0, 2.0, 1.0]]


def test_the_offline_embedder(client):
    texts = ["The cat sat on the mat.", "A cat was sitting on a mat.", "Stock markets fell."]
    reply = client.embeddings.create(model="all-MiniLM-L6-v2", input=texts)
    vectors = [d.embedding for d in reply.data]
    assert [len(v) for v in vectors] == [384] * 3
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    [alone] = client.embeddings.create(model="all-MiniLM-L6-v2", input=texts[2]).data
    assert cosine(alone.embedding, vectors[2]) > 0.9999
    assert reply.usage.prompt_tokens > 0


@pytest.mark.parametrize(
    ("options", "param", "message"),
    [
        ({"input": [[1, 2, 3]]}, "input", "the model 'counting' takes text"),
        ({"input": [1, 2, 3]}, "input", "token ids are ids of a model's own tokenizer"),
        ({"input": [[1, 2], "mixed"]}, "input", "expected a string"),
        ({"input": ["fine", ""]}, "input[1]", "must not be empty"),
        ({"input": []}, "input", "must not be empty"),
        ({"dimensions": 2}, "dimensions", "'counting' gives vectors of 3 dimensions and cannot"),
        ({"dimensions": 0}, "dimensions", "positive integer"),
        ({"encoding_format": "int8"}, "encoding_format", "'float' or 'base64'"),
    ],
)
def test_bad_requests_get_400_naming_the_parameter(client, options, param, message):
    body = {"model": "counting", "input": "Hi", **options}
    with pytest.raises(openai.BadRequestError, match=message) as info:
        client.embeddings.create(**body)
    assert info.value.body["param"] == param


def test_dimensions_of_the_models_own_size_are_accepted(client):
    [data] = client.embeddings.create(model="counting", input="one two", dimensions=3).data
    assert data.embedding == [7.0, 2.0, 1.0]


def test_dimensions_and_token_ids_reach_an_openai_embedder(monkeypatch):
    """OpenAI's embedder takes both: ``dimensions`` (one component per size) and token
    ids (``embed_tokens``), passed on as they came."""
    pytest.importorskip("ferrule_openai", reason="the OpenAI provider plugin is not installed")
    from ferrule_kit.testing.loopback import LoopbackServer, Reply

    def vectors(request) -> Reply:
        body = request.json
        size = body.get("dimensions", 1536)
        data = [
            {"object": "embedding", "index": i, "embedding": [0.5] * size}
            for i in range(len(body["input"]))
        ]
        usage = {"prompt_tokens": 2, "total_tokens": 2}
        return Reply.json({"object": "list", "model": body["model"], "data": data, "usage": usage})

    upstream = LoopbackServer()
    upstream.start_in_thread()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{upstream.url}/v1")  # as the official SDK reads it
        monkeypatch.setenv("OPENAI_API_KEY", "sk-upstream-0123456789")
        with ServerThread(new_kernel()) as url:
            near = openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)
            upstream.script(vectors, vectors, vectors)
            model = "text-embedding-3-small"
            sized = near.embeddings.create(model=model, input="hi", dimensions=8)
            assert len(sized.data[0].embedding) == 8
            tokens = near.embeddings.create(model=model, input=[[9906, 1917], [1]])
            assert len(tokens.data) == 2
            one = near.embeddings.create(model=model, input=[9906, 1917])
            assert len(one.data) == 1
        sent = [r.json for r in upstream.requests]
        assert (sent[0]["input"], sent[0]["dimensions"]) == (["hi"], 8)
        assert sent[1]["input"] == [[9906, 1917], [1]] and "dimensions" not in sent[1]
        assert sent[2]["input"] == [[9906, 1917]]
        upstream.check()
    finally:
        upstream.stop_in_thread()


def test_dimensions_reach_a_gemini_embedder_as_output_dimensionality(monkeypatch):
    """Gemini's embedder takes ``dimensions`` and sends it as ``outputDimensionality``
    (one component per size); the model's own size sends none."""
    pytest.importorskip("ferrule_gemini", reason="the Gemini provider plugin is not installed")
    from ferrule_kit.testing.loopback import LoopbackServer, Reply

    def vectors(request) -> Reply:
        sizes = [item.get("outputDimensionality", 3072) for item in request.json["requests"]]
        return Reply.json({"embeddings": [{"values": [0.5] * size} for size in sizes]})

    upstream = LoopbackServer()
    upstream.start_in_thread()
    try:
        monkeypatch.setenv("GEMINI_BASE_URL", f"{upstream.url}/v1beta")
        monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyUPSTREAM-0123456789abcdef")
        with ServerThread(new_kernel()) as url:
            near = openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)
            upstream.script(vectors, vectors)
            model = "gemini-embedding-001"
            sized = near.embeddings.create(model=model, input=["hi", "there"], dimensions=8)
            assert [len(d.embedding) for d in sized.data] == [8, 8]
            assert sized.data[0].embedding == pytest.approx([8**-0.5] * 8)  # unit length
            full = near.embeddings.create(model=model, input="hi", dimensions=3072)
            assert len(full.data[0].embedding) == 3072
        sent = [r.json["requests"] for r in upstream.requests]
        assert [item["outputDimensionality"] for item in sent[0]] == [8, 8]
        assert [item["content"]["parts"][0]["text"] for item in sent[0]] == ["hi", "there"]
        assert "outputDimensionality" not in sent[1][0]
        assert upstream.requests[0].path.endswith("/models/gemini-embedding-001:batchEmbedContents")
        upstream.check()
    finally:
        upstream.stop_in_thread()


def test_unknown_model_is_404(client):
    with pytest.raises(openai.NotFoundError) as info:
        client.embeddings.create(model="no-such-embedder", input="Hi")
    assert (info.value.body["param"], info.value.body["code"]) == ("model", "unknown_model")


def test_a_provider_failure_keeps_its_status(client):
    with pytest.raises(openai.RateLimitError, match="slow down") as info:
        client.embeddings.create(model="throttled", input="Hi")
    assert info.value.body["code"] == "rate_limited"


def test_an_embedder_deleted_through_the_kernel_api_is_defined_again(client, server):
    url, kernel = server
    client.embeddings.create(model="counting", input="first")
    first = kernel.component("embed:counting")
    with Runtime(url=url, token=TOKEN) as rt:
        rt.delete("embed:counting")
    reply = client.embeddings.create(model="counting", input="again")
    assert reply.data[0].embedding == [5.0, 1.0, 1.0]
    assert kernel.component("embed:counting") is not first


def test_models_lists_the_embedders_beside_the_chat_models(client):
    client.embeddings.create(model="counting", input="served once")
    ids = {m.id: m for m in client.models.list()}
    assert {"test", "all-MiniLM-L6-v2", "counting"} <= set(ids)
    assert ids["all-MiniLM-L6-v2"].owned_by == "ferrule-minilm"
    assert client.models.retrieve("all-MiniLM-L6-v2").owned_by == "ferrule-minilm"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("no-such-model")


def test_a_wrong_token_is_401(server):
    url, _ = server
    wrong = openai.OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.embeddings.create(model="counting", input="Hi")


# -- the route hook --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "provider", "component_type", "attributes"),
    [
        ("text-embedding-3-small", None, "openai_embedder", {"model": "text-embedding-3-small"}),
        ("text-embedding-ada-002", None, "openai_embedder", {"model": "text-embedding-ada-002"}),
        ("nomic-embed-text", "openai", "openai_embedder", {"model": "nomic-embed-text"}),
        ("gemini-embedding-001", None, "gemini_embedder", {"model": "gemini-embedding-001"}),
        (
            "models/text-embedding-004",
            None,
            "gemini_embedder",
            {"model": "models/text-embedding-004"},
        ),
        ("any-embedder", "google", "gemini_embedder", {"model": "any-embedder"}),
        ("all-MiniLM-L6-v2", None, "minilm_embedder", {}),
        ("sentence-transformers/all-MiniLM-L6-v2", "local", "minilm_embedder", {}),
    ],
)
def test_hook_resolve_embedder_routes_each_plugins_ids(
    model_id, provider, component_type, attributes
):
    route = route_embedder(new_kernel(), model_id, provider)
    assert (route.component_type, route.attributes) == (component_type, attributes)


def test_hook_resolve_embedder_unknown_ids_say_what_to_install():
    kernel = new_kernel()
    for model_id, provider in [("gpt-4o", None), ("all-MiniLM-L6-v2", "nobody")]:
        with pytest.raises(UnknownModelError, match="ferrule-minilm") as info:
            route_embedder(kernel, model_id, provider)
        assert info.value.details["model"] == model_id


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)


words = st.text(st.characters(categories=["L"]), min_size=1, max_size=12)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.fixed_dictionaries(
        {
            "model": st.sampled_from(["counting", "counting", "no-such-embedder"]) | json_values,
            "input": st.one_of(
                words,
                words,
                st.lists(words, min_size=1, max_size=4),
                st.lists(st.text()),
                json_values,
            ),
        },
        optional={
            "encoding_format": st.one_of(*[st.sampled_from(["float", "base64"])] * 3, json_values),
            "dimensions": st.one_of(st.none(), st.none(), st.none(), json_values),
            "user": st.text(max_size=8),
        },
    )
)
def test_any_body_gets_embeddings_or_an_openai_error_never_a_500(server, body):
    url, _ = server
    request = urllib.request.Request(
        f"{url}/v1/embeddings",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            status, data = answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        status, data = exc.code, exc.read()
    event(f"status {status}")  # --hypothesis-show-statistics
    assert status < 500, (status, data[:300])
    reply = json.loads(data)
    if status >= 400:
        assert set(reply["error"]) == {"message", "type", "param", "code"}
    else:
        given = body["input"]
        texts = (
            [given] if isinstance(given, str) or (given and isinstance(given[0], int)) else given
        )
        assert len(reply["data"]) == len(texts)
