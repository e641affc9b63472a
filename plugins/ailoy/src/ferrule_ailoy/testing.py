"""Test suites of Ailoy 0.1's raw types, for each ferrule component they stand for.

`VectorStoreSuite`: ``faiss_vector_store`` / ``chromadb_vector_store``. Subclass it with a
``store`` fixture giving a `StoreUnderTest`: an ``AsyncRuntime`` and ``make(name,
dimension)``, which defines an Ailoy store and returns its name. Checked, through the
kernel's requests: ``insert_many`` taking a bare JSON array and answering ids in order;
``get_by_id`` giving back document and metadata (``null`` kept) and the vector's direction,
and ``null`` for an unknown id; ``retrieve`` nearest first with ``similarity`` the cosine,
from 0 to 1 for non-negative vectors, against brute force; ``remove`` and ``clear``
answering ``true`` and seen by the ferrule store underneath (its ``count``); a wrong width
or a missing field refused naming the field in Ailoy's input, before anything is written.

`APIModelSuite`: ``openai`` / ``gemini`` / ``claude`` / ``grok``. Subclass it with an
``ailoy`` fixture giving an `APIModelUnderTest`: an ``AsyncRuntime``, a started
`ferrule_kit.testing.loopback.LoopbackServer` (with the provider's request validator)
that the provider's base-URL variable points at, the type's name, a model id and the
provider's wire dialect::

    class TestOpenAI(APIModelSuite):
        @pytest.fixture
        async def ailoy(self, monkeypatch):
            async with LoopbackServer(validate=validator()) as server, AsyncRuntime() as rt:
                monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
                yield APIModelUnderTest(rt, server, "openai", "gpt-4o", OPENAI)

Checked: ``infer`` yields exactly one item, ``{message, finish_reason}``, the message's
text a string; content as a string or as parts; a reply calling a tool (``tool_calls`` in
OpenAI's shape, arguments an object, ``finish_reason`` ``tool_calls``); the next turn with
OpenAI's history of it; ``api_key``, ``model`` and ``messages`` required, each refusal
naming its field; the key sent to the provider and nowhere else (reprs, the component
list, a provider's refusal, debug logs).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest
from ferrule_kernel import FerruleError, InvalidInputError, configure_logging
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.embeddings.vectors import DimensionMismatchError
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer, Reply

__all__ = [
    "WEATHER",
    "APIModelSuite",
    "APIModelUnderTest",
    "StoreUnderTest",
    "VectorStoreSuite",
]

# -- the stores --------------------------------------------------------------------------

DIMENSION = 10


@attrs.frozen
class StoreUnderTest:
    """What a `VectorStoreSuite` subclass's ``store`` fixture gives."""

    #: A ``ferrule.AsyncRuntime``.
    runtime: Any
    #: ``await make(name, dimension)`` defines an Ailoy store called ``name``.
    make: Callable[[str, int], Awaitable[str]]

    async def call(self, component: str, method: str, inputs: Any) -> Any:
        return await self.runtime.call_method(component, method, inputs)

    async def count(self, component: str) -> int:
        """How many chunks the ferrule store underneath holds (ferrule's own view)."""
        counted = await self.runtime.call_method(f"{component}/store", "count", {})
        return int(counted["count"])


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.hypot(*a) * math.hypot(*b))


def _vectors(rng: random.Random, n: int) -> list[list[float]]:
    # Ailoy's tests embed with Math.random(): non-negative components
    return [[rng.random() + 1e-3 for _ in range(DIMENSION)] for _ in range(n)]


def _paths(error: InvalidInputError) -> list[str]:
    return [entry["path"] for entry in error.errors]


class VectorStoreSuite:
    """Ailoy's store methods (see the module docstring). Override the ``store`` fixture."""

    @pytest.fixture
    def store(self) -> StoreUnderTest:
        pytest.fail("a VectorStoreSuite subclass must override the 'store' fixture")

    async def test_insert_many_get_retrieve_remove_clear(self, store: StoreUnderTest) -> None:
        vs = await store.make("ailoy_roundtrip", DIMENSION)
        vectors = _vectors(random.Random(1), 2)
        items = [
            {"embedding": vectors[0], "document": "doc1", "metadata": {"value": 1}},
            {"embedding": vectors[1], "document": "doc2", "metadata": None},
        ]
        ids = (await store.call(vs, "insert_many", items))["ids"]
        assert len(ids) == 2 and len(set(ids)) == 2

        got = await store.call(vs, "get_by_id", {"id": ids[0]})
        assert (got["id"], got["document"], got["metadata"]) == (ids[0], "doc1", {"value": 1})
        assert _cosine(got["embedding"], vectors[0]) == pytest.approx(1.0, abs=1e-5)
        second = await store.call(vs, "get_by_id", {"id": ids[1]})
        assert (second["document"], second["metadata"]) == ("doc2", None)

        query = {"query_embedding": vectors[0], "top_k": 2}
        found = (await store.call(vs, "retrieve", query))["results"]
        assert [r["id"] for r in found] == ids
        assert [(r["document"], r["metadata"]) for r in found] == [
            ("doc1", {"value": 1}),
            ("doc2", None),
        ]
        assert found[0]["similarity"] == pytest.approx(1.0, abs=1e-5)
        assert found[1]["similarity"] == pytest.approx(_cosine(vectors[0], vectors[1]), abs=1e-4)
        assert all(0.0 <= round(r["similarity"], 6) <= 1.0 for r in found)

        assert await store.call(vs, "remove", {"id": ids[0]}) is True
        assert await store.call(vs, "get_by_id", {"id": ids[0]}) is None
        assert await store.count(vs) == 1
        assert await store.call(vs, "clear", None) is True  # Ailoy sends null
        assert await store.count(vs) == 0
        assert await store.call(vs, "get_by_id", {"id": ids[1]}) is None
        assert await store.call(vs, "clear", {}) is True  # and {} is nothing too

    async def test_retrieve_orders_as_brute_force(self, store: StoreUnderTest) -> None:
        vs = await store.make("ailoy_order", DIMENSION)
        rng = random.Random(7)
        vectors = _vectors(rng, 12)
        items = [{"embedding": v, "document": f"doc{i}"} for i, v in enumerate(vectors)]
        ids = (await store.call(vs, "insert_many", items))["ids"]
        again = await store.call(vs, "insert", {"embedding": vectors[0], "document": "again"})
        assert again["id"] not in ids
        query = _vectors(rng, 1)[0]
        found = (await store.call(vs, "retrieve", {"query_embedding": query, "top_k": 5}))[
            "results"
        ]
        similarities = [r["similarity"] for r in found]
        assert similarities == sorted(similarities, reverse=True)
        by_id = dict(zip(ids, vectors, strict=True))
        for result in found:
            vector = by_id.get(result["id"], vectors[0])
            assert result["similarity"] == pytest.approx(_cosine(query, vector), abs=1e-4)
        best = max(_cosine(query, v) for v in vectors)
        assert similarities[0] == pytest.approx(best, abs=1e-4)

    async def test_bad_input_names_the_field_in_ailoy_s_input(self, store: StoreUnderTest) -> None:
        vs = await store.make("ailoy_bad", DIMENSION)
        good = {"embedding": [0.5] * DIMENSION, "document": "ok"}
        with pytest.raises(DimensionMismatchError) as wrong:
            await store.call(vs, "insert_many", [good, {"embedding": [1.0, 2.0], "document": "x"}])
        assert _paths(wrong.value) == ["$[1].embedding"]
        assert await store.count(vs) == 0  # nothing written
        with pytest.raises(InvalidInputError) as missing:
            await store.call(vs, "insert_many", [{"embedding": [0.5] * DIMENSION}])
        assert _paths(missing.value) == ["$[0].document"]
        with pytest.raises(InvalidInputError) as not_a_list:
            await store.call(vs, "insert_many", {"items": [good]})
        assert _paths(not_a_list.value) == ["$"]
        with pytest.raises(InvalidInputError) as metadata:
            await store.call(vs, "insert", {**good, "metadata": [1, 2]})
        assert _paths(metadata.value) == ["$.metadata"]
        with pytest.raises(DimensionMismatchError) as query:
            await store.call(vs, "retrieve", {"query_embedding": [1.0], "top_k": 1})
        assert _paths(query.value) == ["$.query_embedding"]
        with pytest.raises(InvalidInputError) as top_k:
            await store.call(vs, "retrieve", {"query_embedding": [0.5] * DIMENSION, "top_k": 0})
        assert _paths(top_k.value) == ["$.top_k"]
        with pytest.raises(InvalidInputError) as no_id:
            await store.call(vs, "remove", {})
        assert _paths(no_id.value) == ["$.id"]
        with pytest.raises(InvalidInputError) as empty_id:
            await store.call(vs, "get_by_id", {"id": ""})
        assert _paths(empty_id.value) == ["$.id"]
        with pytest.raises(DimensionMismatchError) as one:
            await store.call(vs, "insert", {"embedding": [1.0], "document": "x"})
        assert _paths(one.value) == ["$.embedding"]
        with pytest.raises(InvalidInputError) as clear:
            await store.call(vs, "clear", {"everything": True})
        assert _paths(clear.value) == ["$.everything"]
        assert await store.count(vs) == 0


# -- the API models ----------------------------------------------------------------------

#: A key for the suite; it must reach the provider and nothing else.
KEY = "sk-ailoy-LOOPBACK-secret-0123456789abcdef"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
QUESTION = {"role": "user", "content": "Who was the president of the US in 2021?"}


@attrs.frozen
class APIModelUnderTest:
    """What an `APIModelSuite` subclass's ``ailoy`` fixture gives (the module docstring)."""

    runtime: Any
    server: LoopbackServer
    #: The Ailoy type's name: ``openai``, ``gemini``, ``claude`` or ``grok``.
    component_type: str
    model: str
    #: The provider's wire dialect (`ferrule_kit.content.parts`), for the scripted replies.
    dialect: str

    async def define(self, name: str = "ailoy") -> str:
        await self.runtime.define(self.component_type, name, {"api_key": KEY, "model": self.model})
        return name

    async def infer(self, name: str, inputs: dict[str, Any]) -> list[dict[str, Any]]:
        return [item async for item in self.runtime.call_iter_method(name, "infer", inputs)]


class APIModelSuite:
    """Ailoy's API-model ``infer`` (see the module docstring). Override ``ailoy``."""

    @pytest.fixture
    def ailoy(self) -> APIModelUnderTest:
        pytest.fail("an APIModelSuite subclass must override the 'ailoy' fixture")

    async def test_infer_yields_one_item_with_the_reply_as_a_string(
        self, ailoy: APIModelUnderTest
    ) -> None:
        name = await ailoy.define()
        ailoy.server.script(reply(ailoy.dialect, "Joe Biden"))
        items = await ailoy.infer(name, {"messages": [QUESTION]})
        assert len(items) == 1
        (item,) = items
        assert item["finish_reason"] == "stop"
        assert item["message"]["role"] == "assistant"
        assert item["message"]["content"] == "Joe Biden"
        assert "tool_calls" not in item["message"]
        sent = ailoy.server.requests[-1]
        text = sent.body.decode()
        assert "president of the US in 2021" in text and ailoy.model in text + sent.path

    async def test_content_as_parts_and_a_system_message_are_taken(
        self, ailoy: APIModelUnderTest
    ) -> None:
        name = await ailoy.define()
        ailoy.server.script(reply(ailoy.dialect, "Paris"))
        messages = [
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": [{"type": "text", "text": "The capital of France?"}]},
        ]
        (item,) = await ailoy.infer(name, {"messages": messages})
        assert item["message"]["content"] == "Paris"
        sent = ailoy.server.requests[-1].body.decode()
        assert "Answer in one word." in sent and "The capital of France?" in sent

    async def test_a_reply_calling_a_tool(self, ailoy: APIModelUnderTest) -> None:
        name = await ailoy.define()
        call = ToolCall("call_w1", "get_weather", {"city": "Seoul"})
        ailoy.server.script(reply(ailoy.dialect, tool_calls=(call,)))
        question = {"role": "user", "content": "What is the weather in Seoul?"}
        (item,) = await ailoy.infer(name, {"messages": [question], "tools": [WEATHER]})
        assert item["finish_reason"] == "tool_calls"
        message = item["message"]
        assert message["role"] == "assistant" and "content" not in message
        (called,) = message["tool_calls"]
        assert called["type"] == "function" and isinstance(called["id"], str) and called["id"]
        assert called["function"] == {"name": "get_weather", "arguments": {"city": "Seoul"}}
        assert "get_weather" in ailoy.server.requests[-1].body.decode()  # the tool was offered

    async def test_the_turn_after_a_tool_call_is_answered(self, ailoy: APIModelUnderTest) -> None:
        name = await ailoy.define()
        ailoy.server.script(reply(ailoy.dialect, "It is sunny in Seoul."))
        messages = [
            {"role": "user", "content": "What is the weather in Seoul?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_w1",
                        "type": "function",
                        # OpenAI's history carries arguments as a JSON string
                        "function": {"name": "get_weather", "arguments": '{"city": "Seoul"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_w1", "content": '{"sky": "sunny"}'},
        ]
        (item,) = await ailoy.infer(name, {"messages": messages, "tools": [WEATHER]})
        assert (item["finish_reason"], item["message"]["content"]) == (
            "stop",
            "It is sunny in Seoul.",
        )
        sent = ailoy.server.requests[-1].body.decode()
        assert "Seoul" in sent and "sunny" in sent  # the call and its result went along

    async def test_define_takes_ailoy_s_attributes_naming_a_bad_one(
        self, ailoy: APIModelUnderTest
    ) -> None:
        refused = {
            "$.api_key": {"model": ailoy.model},
            "$.model": {"api_key": KEY},
            "$.base_url": {"api_key": KEY, "model": ailoy.model, "base_url": "http://x"},
        }
        for path, attributes in refused.items():
            with pytest.raises(InvalidInputError) as info:
                await ailoy.runtime.define(ailoy.component_type, "refused", attributes)
            assert _paths(info.value) == [path]
            assert KEY not in json.dumps(info.value.to_dict())
        with pytest.raises(InvalidInputError) as info:
            await ailoy.runtime.define(
                ailoy.component_type, "refused", {"api_key": "", "model": ailoy.model}
            )
        assert _paths(info.value) == ["$.api_key"]
        assert not [n for n in ailoy.runtime.kernel.components() if n.startswith("refused")]
        assert ailoy.server.requests == []  # nothing was sent

    async def test_infer_without_messages_names_the_field(self, ailoy: APIModelUnderTest) -> None:
        name = await ailoy.define()
        refused: list[dict[str, Any]] = [{}, {"messages": []}, {"messages": "hello"}]
        for inputs in refused:
            with pytest.raises(InvalidInputError) as info:
                await ailoy.infer(name, inputs)
            assert _paths(info.value) == ["$.messages"], inputs
        assert ailoy.server.requests == []

    async def test_the_key_reaches_the_provider_and_nothing_else(
        self, ailoy: APIModelUnderTest, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(debug=True)
        try:
            name = await ailoy.define()
            ailoy.server.script(reply(ailoy.dialect, "Joe Biden"))
            await ailoy.infer(name, {"messages": [QUESTION]})
            refusal = {
                "type": "error",
                "error": {
                    "type": "authentication_error",
                    "code": 401,
                    "status": "UNAUTHENTICATED",
                    "message": "invalid x-api-key",
                },
            }
            ailoy.server.script(Reply.json(refusal, status=401))
            with pytest.raises(FerruleError) as info:
                await ailoy.infer(name, {"messages": [QUESTION]})
        finally:
            configure_logging(debug=False)
        sent = ailoy.server.requests[0]
        assert any(KEY in value for value in [*sent.headers.values(), *sent.query.values()])
        kernel = ailoy.runtime.kernel
        seen = [
            repr(kernel.component(name)),
            repr(kernel.component(f"{name}/model")),
            str(kernel.components()),
            json.dumps(info.value.to_dict()),
            repr(info.value),
            capsys.readouterr().err,
        ]
        for text in seen:
            assert KEY not in text and KEY[-12:] not in text
