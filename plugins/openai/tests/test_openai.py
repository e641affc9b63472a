"""ferrule-openai against a loopback server speaking OpenAI's documented Chat Completions
wire: the conformance suite, request shapes, stream translation, the fault matrix, the
sync Runtime, secrets, and model-id resolution. Nothing reaches the internet."""

from __future__ import annotations

import base64
from typing import ClassVar

import pytest
import pytest_asyncio
from ferrule import APIModel, AsyncRuntime, Runtime
from ferrule.testing import AgentConformance
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.errors import (
    AuthenticationError,
    ModelNotFoundError,
    ProviderUnavailableError,
    QuotaExceededError,
    RateLimitError,
    UnknownModelError,
    UnsupportedContentError,
)
from ferrule_kit.testing import (
    Capabilities,
    LanguageModelConformance,
    LanguageModelUnderTest,
    ScriptedTurn,
    check_stream,
    fold,
    tiny_png,
    tiny_wav,
)
from ferrule_kit.testing import chat_completions as wire
from ferrule_kit.testing.loopback import LoopbackServer, Reply, server_fixture, sse
from ferrule_kit.testing.providers import (
    USER,
    Definer,
    Failure,
    ProviderConformance,
    ProviderUnderTest,
    Refusal,
    collect,
)
from ferrule_kit.testing.strategies import texts, tool_calls
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

KEY = "sk-proj-LOOPBACK-secret-key-0123456789abcdef"


server = server_fixture(wire.validator())


@pytest.fixture
def openai_env(server, monkeypatch):
    """OpenAI's own endpoint, moved to the loopback server the way the official SDK allows."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


@pytest_asyncio.fixture
async def runtime():
    async with AsyncRuntime() as rt:
        yield rt


@pytest_asyncio.fixture
async def define(runtime, openai_env):
    """define(model="gpt-4o", **attributes) -> component name, on OpenAI's (loopback) API."""
    return Definer(runtime, "openai_language_model", "lm", {"model": "gpt-4o", "max_retries": 3})


# -- conformance ----------------------------------------------------------------------


class TestOpenAIConformance(LanguageModelConformance, AgentConformance):
    @pytest_asyncio.fixture
    async def lm(self, define, runtime, server):
        name = await define("gpt-4o")
        yield LanguageModelUnderTest(
            runtime,
            name,
            Capabilities(images=True, image_urls=True, audio=True, output_schema=True),
            script=lambda turn, inputs: server.script(wire.reply(turn)),
        )


class TestCompatibleServerConformance(LanguageModelConformance, AgentConformance):
    """Another OpenAI-compatible server (vLLM, Ollama, llama.cpp...) via base_url, with no
    key, streaming reasoning as ``delta.reasoning_content``."""

    @pytest_asyncio.fixture
    async def lm(self, runtime, server, monkeypatch):
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        await runtime.define(
            "openai_language_model",
            "vllm",
            {"model": "Qwen/Qwen3-8B", "base_url": server.url + "/v1"},
        )
        yield LanguageModelUnderTest(
            runtime,
            "vllm",
            Capabilities(
                reasoning=True, images=True, image_urls=True, audio=True, output_schema=True
            ),
            script=lambda turn, inputs: server.script(wire.reply(turn)),
        )


# -- request shapes -------------------------------------------------------------------


async def test_request_for_a_chat_model(define, runtime, server):
    name = await define("gpt-4o")
    server.script(wire.reply(ScriptedTurn(text=("ok",))))
    inputs = {
        "messages": [{"role": "system", "content": "Be brief."}, USER],
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 50,
        "stop": ["\n\n"],
        "reasoning": "high",
    }
    await collect(runtime, name, inputs)
    request = server.requests[0]
    body = request.json
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == "gpt-4o"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.2 and body["top_p"] == 0.9 and body["stop"] == ["\n\n"]
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body
    assert "reasoning_effort" not in body  # gpt-4o refuses the field


@pytest.mark.parametrize(
    ("model", "asked", "sent"),
    [
        ("o3", "minimal", "low"),
        ("o4-mini", "high", "high"),
        ("gpt-5", "minimal", "minimal"),
        ("o3-mini", "medium", "medium"),
    ],
)
async def test_request_for_a_reasoning_model(define, runtime, server, model, asked, sent):
    name = await define(model)
    server.script(wire.reply(ScriptedTurn(text=("ok",))))
    inputs = {
        "messages": [{"role": "system", "content": "Think."}, USER],
        "temperature": 0.5,
        "max_tokens": 500,
        "reasoning": asked,
    }
    await collect(runtime, name, inputs)
    body = server.requests[0].json
    assert body["messages"][0] == {"role": "developer", "content": "Think."}
    assert (
        "temperature" not in body and "top_p" not in body
    )  # reasoning models refuse sampling options
    assert body["max_completion_tokens"] == 500
    assert body["reasoning_effort"] == sent


async def test_stop_on_a_reasoning_model_is_refused_before_any_request(define, runtime, server):
    name = await define("o3")
    with pytest.raises(InvalidInputError) as info:
        await collect(runtime, name, {"messages": [USER], "stop": ["x"]})
    assert info.value.errors[0]["path"] == "$.stop"
    assert server.requests == []


async def test_tools_and_tool_results_on_the_wire(define, runtime, server):
    name = await define()
    server.script(wire.reply(ScriptedTurn(text=("3°C",))))
    messages = [
        USER,
        {
            "role": "assistant",
            "content": [],
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"city": "Lima"}'},
                },
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": [{"type": "text", "text": '{"temp": 3}'}],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "12:00"},
    ]
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "w",
                "parameters": {"type": "object"},
            },
        }
    ]
    await collect(runtime, name, {"messages": messages, "tools": tools})
    body = server.requests[0].json
    assert body["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "get_time", "arguments": '{"city": "Lima"}'},
            },
        ],
    }
    assert body["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": '{"temp": 3}',
    }
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "w",
                "parameters": {"type": "object"},
            },
        }
    ]


async def test_tool_message_without_call_id_names_the_field(define, runtime, server):
    name = await define()
    with pytest.raises(InvalidInputError) as info:
        await collect(runtime, name, {"messages": [USER, {"role": "tool", "content": "x"}]})
    assert info.value.errors[0]["path"] == "$.messages[1].tool_call_id"
    assert server.requests == []


async def test_structured_output(define, runtime, server):
    name = await define()
    server.script(
        wire.reply(ScriptedTurn(text=('{"a": 1}',))), wire.reply(ScriptedTurn(text=("{}",)))
    )
    strict = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    await collect(runtime, name, {"messages": [USER], "output_schema": strict})
    assert server.requests[0].json["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": strict, "strict": True},
    }
    any_object = {"type": "object"}  # JSON mode (a client's json_object): sent as such
    await collect(runtime, name, {"messages": [USER], "output_schema": any_object})
    assert server.requests[1].json["response_format"] == {"type": "json_object"}


async def test_strict_output_false_sends_the_schema_as_a_guide(define, runtime, server):
    name = await define(strict_output=False)
    server.script(wire.reply(ScriptedTurn(text=('{"a": 1}',))))
    closed = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    await collect(runtime, name, {"messages": [USER], "output_schema": closed})
    assert server.requests[0].json["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": closed, "strict": False},
    }


async def test_strict_output_must_be_a_bool(define):
    with pytest.raises(InvalidInputError) as info:
        await define(strict_output="no")
    assert "strict_output" in str(info.value)


async def test_images_and_audio_on_the_wire(define, runtime, server):
    name = await define("gpt-4o-audio-preview")
    server.script(wire.reply(ScriptedTurn(text=("a red square",))))
    png = base64.b64encode(tiny_png()).decode()
    wav = base64.b64encode(tiny_wav()).decode()
    content = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.jpg"}},
        {"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}},
    ]
    await collect(runtime, name, {"messages": [{"role": "user", "content": content}]})
    assert server.requests[0].json["messages"][0]["content"] == content


async def test_compatible_server_gets_max_tokens_and_no_environment_key(
    runtime, server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    await runtime.define(
        "openai_language_model", "local", {"model": "llama3", "base_url": server.url + "/v1/"}
    )
    server.script(wire.reply(ScriptedTurn(text=("ok",))), wire.reply(ScriptedTurn(text=("ok",))))
    await collect(runtime, "local", {"messages": [USER], "max_tokens": 9, "reasoning": "low"})
    request = server.requests[0]
    assert "authorization" not in request.headers, "an OpenAI key is never sent to another host"
    assert request.json["max_tokens"] == 9 and request.json["reasoning_effort"] == "low"
    await runtime.define(
        "openai_language_model",
        "keyed",
        {"model": "llama3", "base_url": server.url + "/v1", "api_key": "local-key"},
    )
    await collect(runtime, "keyed", {"messages": [USER]})
    assert server.requests[1].headers["authorization"] == "Bearer local-key"
    assert "reasoning_effort" not in server.requests[1].json
    server.script(wire.reply(ScriptedTurn(text=("ok",))))
    await collect(runtime, "keyed", {"messages": [USER], "reasoning": True})
    # the only on-switch the Chat Completions wire has
    assert server.requests[2].json["reasoning_effort"] == "medium"


async def test_organization_project_and_extra_body(define, runtime, server):
    name = await define("gpt-4o", organization="org-1", project="proj-1", extra_body={"seed": 7})
    server.script(wire.reply(ScriptedTurn(text=("ok",))))
    await collect(runtime, name, {"messages": [USER]})
    request = server.requests[0]
    assert (
        request.headers["openai-organization"] == "org-1"
        and request.headers["openai-project"] == "proj-1"
    )
    assert request.json["seed"] == 7


# -- stream translation ---------------------------------------------------------------


async def test_parallel_tool_call_fragments_interleaved(define, runtime, server):
    name = await define()
    c = wire.chunk
    server.script(
        Reply.sse(
            [
                c({"role": "assistant", "content": None}),
                c(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": ""},
                            }
                        ]
                    }
                ),
                c({"tool_calls": [{"index": 0, "function": {"arguments": '{"ci'}}]}),
                c(
                    {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "call_b",
                                "type": "function",
                                "function": {"name": "get_time", "arguments": '{"city"'},
                            }
                        ]
                    }
                ),
                c(
                    {
                        "tool_calls": [
                            {"index": 0, "function": {"arguments": 'ty": "Oslo"}'}},
                            {"index": 1, "function": {"arguments": ': "Lima"}'}},
                        ]
                    }
                ),
                c({}, "tool_calls"),
                sse(
                    {
                        "choices": [],
                        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99},
                    }
                ),
                sse("[DONE]"),
            ]
        )
    )
    items = await collect(runtime, name, {"messages": [USER]})
    check_stream(items)
    acc = fold(items)
    assert acc.tool_calls() == [
        ToolCall("call_a", "get_weather", {"city": "Oslo"}),
        ToolCall("call_b", "get_time", {"city": "Lima"}),
    ]
    assert items[-1]["finish_reason"] == "tool_calls"
    assert items[-1]["usage"] == {"input_tokens": 82, "output_tokens": 17}


async def test_lenient_compatible_streams(define, runtime, server):
    """No tool-call id (older Ollama), "stop" after tool calls, usage with choices null
    (vLLM), an obfuscation field, a keep-alive comment."""
    name = await define()
    server.script(
        Reply.sse(
            [
                b": keep-alive\n\n",
                wire.chunk(
                    {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]},
                    obfuscation="xyz",
                ),
                wire.chunk({}, "stop"),
                sse(
                    {
                        "choices": None,
                        "usage": {
                            "prompt_tokens": 5,
                            "completion_tokens": 2,
                            "completion_tokens_details": {"reasoning_tokens": 1},
                        },
                    }
                ),
                sse("[DONE]"),
            ]
        )
    )
    items = await collect(runtime, name, {"messages": [USER]})
    check_stream(items)
    call = fold(items).tool_calls()[0]
    assert call.id.startswith("call_") and call.name == "f"
    assert items[-1]["finish_reason"] == "tool_calls"
    assert items[-1]["usage"] == {"input_tokens": 5, "output_tokens": 2, "reasoning_tokens": 1}


async def test_server_without_usage_or_done(define, runtime, server):
    name = await define()
    server.script(Reply.sse([wire.chunk({"content": "hi"}), wire.chunk({}, "length")]))
    items = await collect(runtime, name, {"messages": [USER]})
    assert items[-1]["finish_reason"] == "length"
    assert items[-1]["usage"] == {"input_tokens": 0, "output_tokens": 0}


# -- faults ---------------------------------------------------------------------------

OK = ScriptedTurn(text=("fine",))
INCORRECT_KEY = wire.error(
    f"Incorrect API key provided: {KEY[:8]}********{KEY[-4:]}.",
    "invalid_request_error",
    "invalid_api_key",
)


class TestOpenAIProvider(ProviderConformance):
    KEY_VARIABLES = ("OPENAI_API_KEY",)
    ENDPOINT_VARIABLES = ("OPENAI_BASE_URL",)
    REFUSED: ClassVar[dict[str, Refusal]] = {
        "bmp": (
            {"type": "image_url", "image_url": {"url": "data:image/bmp;base64,Qk0="}},
            UnsupportedContentError,
            ("openai", "image/bmp", "image/png"),
        ),
        "flac": (
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "flac"}},
            UnsupportedContentError,
            ("openai", "flac", "wav"),
        ),
        "too-big": (
            {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64," + "A" * (28 * 1024 * 1024)},
            },
            InvalidInputError,
            ("MiB", "20"),
        ),
    }
    RETRYABLE: ClassVar[dict[str, Reply]] = {
        "429-retry-after": Reply.json(
            wire.error("Rate limit reached", "requests", "rate_limit_exceeded"),
            429,
            {"retry-after": "0.05"},
        ),
        "500": Reply.json(wire.error("The server had an error", "server_error"), 500),
        "529": Reply.json(wire.error("Overloaded", "server_error"), 529, {"retry-after-ms": "20"}),
        "502": Reply.json(
            wire.error("Bad gateway", "server_error"),
            502,
            {"x-should-retry": "true", "retry-after-ms": "10"},
        ),
        "reset-before-first-byte": Reply.reset(),
    }
    TERMINAL: ClassVar[dict[str, Failure]] = {
        "401": (Reply.json(INCORRECT_KEY, 401), AuthenticationError, "Incorrect API key provided"),
        "insufficient_quota": (
            Reply.json(
                wire.error(
                    "You exceeded your current quota, please check your plan and billing details.",
                    "insufficient_quota",
                    "insufficient_quota",
                ),
                429,
            ),
            QuotaExceededError,
            "You exceeded your current quota",
        ),
        "retired-model": (
            Reply.json(
                wire.error(
                    "The model `gpt-4.1-nano` does not exist or you do not have access to it.",
                    "invalid_request_error",
                    "model_not_found",
                ),
                404,
            ),
            ModelNotFoundError,
            "The model `gpt-4.1-nano` does not exist",
        ),
    }

    @pytest_asyncio.fixture
    async def provider(self, runtime, server, openai_env):
        # OpenAI's own endpoint (OPENAI_BASE_URL), not a compatible server's base_url
        return await ProviderUnderTest.define(
            runtime, server, wire.WIRE, "openai_language_model", "gpt-4o", KEY, path=None
        )


async def test_a_typed_error_carries_the_providers_words_not_the_masked_key(
    define, runtime, server
):
    name = await define()
    server.script(Reply.json(INCORRECT_KEY, 401))
    with pytest.raises(AuthenticationError) as info:
        await collect(runtime, name, {"messages": [USER]})
    err = info.value
    assert err.details["provider_message"].startswith("Incorrect API key provided")
    assert err.details["provider"] == "openai" and err.details["status"] == 401
    assert KEY[-4:] + "." not in err.message


def test_the_key_is_not_in_a_routes_or_attributes_repr():
    from ferrule_openai.attributes import OpenAIAttributes

    assert KEY not in repr(APIModel("gpt-4o", api_key=KEY))
    assert KEY not in repr(OpenAIAttributes(model="gpt-4o", api_key=KEY))


def rate_limited(headers: dict[str, str]) -> Reply:
    """OpenAI's 429 for too many requests, asking (in ``headers``) for a wait."""
    return Reply.json(wire.error("Rate limit", "requests", "rate_limit_exceeded"), 429, headers)


async def test_quota_error_after_rate_limit_retries(define, runtime, server):
    name = await define()
    server.script(
        rate_limited({"retry-after-ms": "5"}),
        Reply.json(
            wire.error(
                "You exceeded your current quota", "insufficient_quota", "insufficient_quota"
            ),
            429,
        ),
    )
    with pytest.raises(QuotaExceededError):
        await collect(runtime, name, {"messages": [USER]})
    assert len(server.requests) == 2


async def test_rate_limit_asking_too_long_is_not_waited_for(define, runtime, server):
    name = await define()
    server.script(rate_limited({"retry-after": "3600"}))
    with pytest.raises(RateLimitError) as info:
        await collect(runtime, name, {"messages": [USER]})
    assert not isinstance(info.value, QuotaExceededError)


async def test_error_event_mid_stream(define, runtime, server):
    name = await define()
    server.script(
        Reply.sse(
            [
                wire.chunk({"content": "a"}),
                sse(wire.error("The server had an error while processing", "server_error")),
            ]
        )
    )
    with pytest.raises(ProviderUnavailableError, match="The server had an error"):
        await collect(runtime, name, {"messages": [USER]})


# -- keys and definitions -------------------------------------------------------------


def test_sync_runtime_streams_and_closes(monkeypatch):
    with LoopbackServer(validate=wire.validator()) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        server.script(wire.reply(ScriptedTurn(text=("Hello", " world"))))
        with Runtime() as rt:
            route = APIModel("gpt-4o").route(rt.kernel)
            rt.define(route.component_type, "lm", route.attributes)
            items = list(rt.call_iter_method("lm", "infer", {"messages": [USER]}))
            check_stream(items)
            assert fold(items).message().text == "Hello world"
            component = rt.kernel.component("lm")
            rt.delete("lm")
            assert component.client._session is None


# -- resolution -----------------------------------------------------------------------

GUIDE_IDS = [
    "o4-mini",
    "o3",
    "o3-pro",
    "o3-mini",
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
]


@pytest.fixture(scope="module")
def kernel():
    from ferrule_kit import kit_plugin

    return Kernel(plugins=[kit_plugin])


@pytest.mark.parametrize(
    "model_id", [*GUIDE_IDS, "gpt-5", "chatgpt-4o-latest", "o1", "o1-mini", "gpt-4o-audio-preview"]
)
def test_known_ids_resolve_without_provider(kernel, model_id):
    route = APIModel(model_id).route(kernel)
    assert route.component_type == "openai_language_model" and route.attributes == {
        "model": model_id
    }


def test_any_id_with_provider_openai_and_base_url(kernel):
    route = APIModel(
        "Qwen/Qwen3-8B", provider="openai", base_url="http://127.0.0.1:8000/v1", api_key="k"
    ).route(kernel)
    assert route.component_type == "openai_language_model"
    assert route.attributes == {
        "model": "Qwen/Qwen3-8B",
        "base_url": "http://127.0.0.1:8000/v1",
        "api_key": "k",
    }


def test_unknown_id_needs_a_provider(kernel):
    with pytest.raises(UnknownModelError, match="provider="):
        APIModel("my-finetune").route(kernel)


async def test_component_survives_a_failed_request(define, runtime, server):
    name = await define()
    server.script(Reply.json(wire.error("bad", "invalid_request_error"), 400), wire.reply(OK))
    with pytest.raises(Exception, match="bad"):
        await collect(runtime, name, {"messages": [USER]})
    assert fold(await collect(runtime, name, {"messages": [USER]})).message().text == "fine"


def test_plugin_module_imports_nothing_heavy():
    import subprocess
    import sys

    code = "import sys, ferrule, ferrule_openai.plugin; print('aiohttp' in sys.modules, 'ferrule_kit.models.chat_completions' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]


def test_another_ferrule_serve_is_a_backend(monkeypatch):
    """ferrule-openai -> a real `ferrule serve` (its /v1/chat/completions) -> the echoing
    test model: how a ferrule user scales past one machine."""
    from ferrule.server import ServerThread

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ServerThread() as url, Runtime() as rt:
        route = APIModel("test", provider="openai", base_url=url + "/v1").route(rt.kernel)
        rt.define(route.component_type, "remote", route.attributes)
        inputs = {
            "messages": [{"role": "user", "content": "Hello from the other side"}],
            "reasoning": True,
        }
        items = list(rt.call_iter_method("remote", "infer", inputs))
        check_stream(items)
        message = fold(items).message()
        assert message.text == "Hello from the other side"
        assert message.reasoning and "5 words" in message.reasoning[0].text
        assert items[-1]["usage"]["output_tokens"] > 0


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.lists(texts, max_size=6),
    reasoning=st.lists(texts, max_size=3),
    calls=tool_calls,
    fragments=st.integers(1, 6),
)
async def test_any_streamed_turn_folds_back_to_itself(text, reasoning, calls, fragments):
    tool_calls = tuple(ToolCall(f"call_{i}", name, args) for i, (name, args) in enumerate(calls))
    turn = ScriptedTurn(
        text=tuple(text),
        reasoning=tuple(reasoning),
        tool_calls=tool_calls,
        finish_reason="tool_calls" if calls else "stop",
    )
    async with LoopbackServer(validate=wire.validator()) as server, AsyncRuntime() as rt:
        await rt.define(
            "openai_language_model", "lm", {"model": "m", "base_url": server.url + "/v1"}
        )
        server.script(wire.reply(turn, argument_fragments=fragments))
        items = await collect(rt, "lm", {"messages": [USER]})
    check_stream(items)
    message = fold(items).message()
    assert message.text == "".join(text)
    assert "".join(p.text for p in message.reasoning) == "".join(reasoning)
    assert message.tool_calls == list(tool_calls)
    assert items[-1]["finish_reason"] == turn.finish_reason
