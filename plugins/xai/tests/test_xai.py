"""ferrule-xai against a loopback server speaking xAI's OpenAI-compatible wire (with xAI's
differences: reasoning_content deltas, its error bodies, its media limits): the
conformance suite, request shapes, the fault matrix, secrets and id resolution."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import ClassVar

import attrs
import pytest
import pytest_asyncio
from ferrule import APIModel, AsyncRuntime
from ferrule.testing import AgentConformance
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.errors import (
    AuthenticationError,
    ModelNotFoundError,
    ProviderBadRequestError,
    QuotaExceededError,
    UnsupportedContentError,
)
from ferrule_kit.models.lm import MessageAccumulator
from ferrule_kit.testing import (
    Capabilities,
    LanguageModelConformance,
    LanguageModelUnderTest,
    ScriptedTurn,
    fold,
    tiny_png,
)
from ferrule_kit.testing import chat_completions as wire
from ferrule_kit.testing.loopback import Reply, server_fixture
from ferrule_kit.testing.providers import (
    USER,
    Definer,
    Failure,
    ProviderConformance,
    ProviderUnderTest,
    Refusal,
    collect,
)

KEY = "xai-LOOPBACK-secret-key-0123456789abcdefghij"


server = server_fixture(wire.validator())


@pytest_asyncio.fixture
async def runtime(monkeypatch):
    monkeypatch.setenv("XAI_API_KEY", KEY)
    async with AsyncRuntime() as rt:
        yield rt


@pytest_asyncio.fixture
async def define(runtime, server):
    defaults = {"model": "grok-3", "base_url": server.url + "/v1"}
    return Definer(runtime, "xai_language_model", "grok", defaults)


class TestGrokReasoningConformance(LanguageModelConformance, AgentConformance):
    """grok-3-mini: reasoning as ``delta.reasoning_content``; reasoning models take no stop."""

    @pytest_asyncio.fixture
    async def lm(self, define, runtime, server):
        name = await define("grok-3-mini")
        yield LanguageModelUnderTest(
            runtime,
            name,
            Capabilities(
                reasoning=True,
                stop=False,
                images=True,
                image_urls=True,
                audio=False,
                output_schema=True,
            ),
            script=lambda turn, inputs: server.script(wire.reply(turn)),
        )


async def test_request_shape_and_auth(define, runtime, server):
    name = await define("grok-3")
    server.script(wire.reply(ScriptedTurn(text=("ok",))))
    await collect(
        runtime, name, {"messages": [USER], "max_tokens": 20, "stop": ["END"], "temperature": 0.3}
    )
    request = server.requests[0]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.json
    assert body["model"] == "grok-3" and body["max_tokens"] == 20 and body["stop"] == ["END"]
    assert body["temperature"] == 0.3 and "reasoning_effort" not in body


async def test_strict_output_false_sends_strict_false(define, runtime, server):
    name = await define("grok-3", strict_output=False)
    server.script(wire.reply(ScriptedTurn(text=('{"a": 1}',))))
    closed = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    await collect(runtime, name, {"messages": [USER], "output_schema": closed})
    sent = server.requests[0].json["response_format"]["json_schema"]
    assert sent == {"name": "output", "schema": closed, "strict": False}


@pytest.mark.parametrize(
    ("asked", "sent"), [("minimal", "low"), ("low", "low"), ("medium", "high"), ("high", "high")]
)
async def test_reasoning_effort_for_grok_3_mini(define, runtime, server, asked, sent):
    name = await define("grok-3-mini")
    server.script(wire.reply(ScriptedTurn(reasoning=("hm",), text=("ok",))))
    items = await collect(runtime, name, {"messages": [USER], "reasoning": asked})
    assert server.requests[0].json["reasoning_effort"] == sent
    assert fold(items).message().reasoning[0].text == "hm"
    assert items[-1]["usage"]["reasoning_tokens"] == 1


async def test_grok_4_gets_no_reasoning_effort_and_refuses_stop(define, runtime, server):
    name = await define("grok-4")
    server.script(wire.reply(ScriptedTurn(text=("ok",))))
    await collect(runtime, name, {"messages": [USER], "reasoning": "high"})
    assert "reasoning_effort" not in server.requests[0].json
    with pytest.raises(InvalidInputError) as info:
        await collect(runtime, name, {"messages": [USER], "stop": ["x"]})
    assert info.value.errors[0]["path"] == "$.stop" and len(server.requests) == 1


async def test_images_base64_and_url_on_the_wire(define, runtime, server):
    name = await define("grok-2-vision-1212")
    server.script(wire.reply(ScriptedTurn(text=("a square",))))
    png = base64.b64encode(tiny_png()).decode()
    content = [
        {"type": "text", "text": "What?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/x.jpg"}},
    ]
    await collect(runtime, name, {"messages": [{"role": "user", "content": content}]})
    assert server.requests[0].json["messages"][0]["content"] == content


# -- faults ---------------------------------------------------------------------------


def xai_error(status: int, message: str, headers: Mapping[str, str]) -> Reply:
    """An error reply as xAI writes them: ``{"code": <what>, "error": <message>}``."""
    return Reply.json({"code": f"HTTP {status}", "error": message}, status, headers)


class TestXAIProvider(ProviderConformance):
    KEY_VARIABLES = ("XAI_API_KEY",)
    REFUSED: ClassVar[dict[str, Refusal]] = {
        "audio": (
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
            UnsupportedContentError,
            ("xai", "audio", "openai and gemini"),
        ),
        "webp": (
            {"type": "image_url", "image_url": {"url": "data:image/webp;base64,UklG"}},
            UnsupportedContentError,
            ("xai", "image/webp", "image/png"),
        ),
        "too-big": (
            {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64," + "A" * (15 * 1024 * 1024)},
            },
            InvalidInputError,
            ("10 MiB",),
        ),
    }
    RETRYABLE: ClassVar[dict[str, Reply]] = {
        "429": Reply.json(
            {"code": "Too many requests", "error": "Rate limit exceeded"}, 429, {"retry-after": "0"}
        ),
        "503": Reply.json(
            {"code": "Internal", "error": "upstream failed"}, 503, {"retry-after-ms": "10"}
        ),
        "529": Reply.json(
            {"code": "Overloaded", "error": "overloaded"}, 529, {"retry-after-ms": "10"}
        ),
        "reset-before-first-byte": Reply.reset(),
    }
    TERMINAL: ClassVar[dict[str, Failure]] = {
        "out-of-credits": (
            Reply.json({"code": 429, "error": "You ran out of credits."}, 429),
            QuotaExceededError,
            "You ran out of credits.",
        ),
        "bad-key-400": (
            Reply.json(
                {
                    "code": "Client specified an invalid argument",
                    "error": "Incorrect API key provided: xa***ij. You can obtain an API key from https://console.x.ai.",
                },
                400,
            ),
            ProviderBadRequestError,
            "Incorrect API key provided",
        ),
        "401": (
            Reply.json({"code": "Unauthorized", "error": f"bad key {KEY}"}, 401),
            AuthenticationError,
            "bad key ***",
        ),
        "retired-model": (
            Reply.json(
                {
                    "code": "Some requested entity was not found",
                    "error": "The model grok-2-vision-1212 does not exist or your team does not have access to it.",
                },
                404,
            ),
            ModelNotFoundError,
            "The model grok-2-vision-1212 does not exist",
        ),
    }

    @pytest_asyncio.fixture
    async def provider(self, runtime, server):
        of_xai = attrs.evolve(wire.WIRE, error=xai_error)
        return await ProviderUnderTest.define(
            runtime, server, of_xai, "xai_language_model", "grok-3", KEY, path="/v1"
        )


# -- resolution -----------------------------------------------------------------------

GUIDE_IDS = [
    "grok-4",
    "grok-4-0709",
    "grok-3",
    "grok-3-fast",
    "grok-3-mini",
    "grok-3-mini-fast",
    "grok-2",
    "grok-2-1212",
    "grok-2-vision-1212",
    "grok-2-image-1212",
]


@pytest.fixture(scope="module")
def kernel():
    from ferrule_kit import kit_plugin

    return Kernel(plugins=[kit_plugin])


@pytest.mark.parametrize("model_id", [*GUIDE_IDS, "grok-4.3"])
def test_ids_resolve(kernel, model_id):
    route = APIModel(model_id).route(kernel)
    assert route.component_type == "xai_language_model" and route.attributes == {"model": model_id}


@pytest.mark.parametrize("provider", ["xai", "grok", "XAI"])
def test_provider_names(kernel, provider):
    assert (
        APIModel("anything", provider=provider).route(kernel).component_type == "xai_language_model"
    )


async def test_xai_base_url_moves_the_endpoint_when_no_base_url_is_given(
    runtime, server, monkeypatch
):
    monkeypatch.setenv("XAI_BASE_URL", server.url + "/v1/")
    server.script(wire.reply(ScriptedTurn(text=("Hello",))))
    await runtime.define("xai_language_model", "grok-env", {"model": "grok-3"})
    items = [i async for i in runtime.call_iter_method("grok-env", "infer", {"messages": [USER]})]
    accumulator = MessageAccumulator()
    for item in items:
        accumulator.add(item)
    assert accumulator.message().text == "Hello"
    assert [r.path for r in server.requests] == ["/v1/chat/completions"]
