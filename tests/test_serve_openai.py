"""`/v1/chat/completions` and `/v1/models` of `ferrule serve`, driven by the official
`openai` client as a real client, against a real server on a loopback port.

Models come through the route hooks, as in production: ``test`` is ferrule-testmodel's
echoing model (``LocalModel("test")``); the plugin below routes a few more ids to
scripted test models and to small LM-contract components that record what happened.
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import attrs
import openai
import pytest
from ferrule import Runtime
from ferrule.server import ServerThread
from ferrule_image import ImagePart
from ferrule_kernel import Kernel, hookimpl
from ferrule_kit import kit_plugin
from ferrule_kit.errors import ModelError, UnsupportedContentError
from ferrule_kit.models.lm import InferInput, finish, text_delta
from ferrule_kit.models.lmspec import ModelRoute, language_model_type

pytestmark = pytest.mark.timeout(60)

TOKEN = "serve-test-token-0123456789"
API_KEY = "sk-route-secret-abcdef123456"
ENV_KEY = "sk-env-secret-fedcba654321"
MAX_BODY = 64 * 1024
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

WEATHER_CALL = {"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "call_weather"}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        "strict": True,
    },
}


@attrs.frozen
class NoAttributes:
    pass


class EndlessModel:
    """Streams text until closed; records that it was."""

    closed = threading.Event()
    produced = 0

    def __init__(self, attributes: NoAttributes) -> None:
        pass

    async def infer(self, inputs: InferInput):
        try:
            while True:
                type(self).produced += 1
                yield text_delta("tick ")
                await asyncio.sleep(0.005)
        finally:
            type(self).closed.set()


class TextOnlyModel:
    """Refuses images before generating, as a text-only backend does."""

    def __init__(self, attributes: NoAttributes) -> None:
        pass

    async def infer(self, inputs: InferInput):
        for m, message in enumerate(inputs.messages):
            for p, part in enumerate(message.contents):
                if isinstance(part, ImagePart):
                    raise UnsupportedContentError(
                        "this model takes text only", field=f"$.messages[{m}].content[{p}]"
                    )
        yield finish("stop")


class MalformedModel:
    """Yields an item outside the LM contract (a plugin bug)."""

    def __init__(self, attributes: NoAttributes) -> None:
        pass

    async def infer(self, inputs: InferInput):
        yield text_delta("fine ")
        yield {"message": "not an object"}


@attrs.frozen
class KeyedAttributes:
    api_key: str


class CarelessModel:
    """A backend that puts its key in an error message: the server must not pass it on."""

    def __init__(self, attributes: KeyedAttributes) -> None:
        self.api_key = attributes.api_key

    async def infer(self, inputs: InferInput):
        import os

        raise ModelError(
            f"provider said: invalid key {self.api_key} (env: {os.environ['FERRULE_TEST_API_KEY']})",
            provider="careless",
        )
        yield  # an async generator


def scripted(*turns: Any) -> ModelRoute:
    return ModelRoute("test_language_model", {"turns": list(turns)})


class ServeModelsPlugin:
    @hookimpl
    def ferrule_register_component_types(self):
        return [
            language_model_type("endless_lm", EndlessModel, NoAttributes),
            language_model_type("text_only_lm", TextOnlyModel, NoAttributes),
            language_model_type("malformed_lm", MalformedModel, NoAttributes),
            language_model_type("careless_lm", CarelessModel, KeyedAttributes),
        ]

    @hookimpl
    def ferrule_resolve_local_model(self, model_id: str):
        return {
            "weather-bot": scripted(
                {"tool_calls": [WEATHER_CALL]}, {"text": "It is 3 degrees in Oslo."}
            ),
            "weather-bot-again": scripted(
                {"tool_calls": [WEATHER_CALL]}, {"text": "It is 3 degrees in Oslo."}
            ),
            "weather-bot-streaming": scripted({"tool_calls": [WEATHER_CALL]}),
            "failing": scripted(*[{"text": "partial answer", "error": "backend exploded"}] * 4),
            "slow": ModelRoute("test_language_model", {"delay": 0.01}),
            "endless": ModelRoute("endless_lm", {}),
            "text-only": ModelRoute("text_only_lm", {}),
            "malformed": ModelRoute("malformed_lm", {}),
            "misconfigured": scripted({"text": 42}),
        }.get(model_id)

    @hookimpl
    def ferrule_resolve_api_model(self, model_id: str, provider: str | None):
        if model_id == "careless-gpt":
            return ModelRoute("careless_lm", {"api_key": API_KEY})
        return None


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Kernel]]:
    mp = pytest.MonkeyPatch()
    mp.setenv("FERRULE_TEST_API_KEY", ENV_KEY)
    kernel = Kernel(plugins=[kit_plugin, ServeModelsPlugin()])
    with ServerThread(kernel, token=TOKEN, max_body_size=MAX_BODY, models=["careless-gpt"]) as url:
        yield url, kernel
    mp.undo()


@pytest.fixture(scope="module")
def client(server) -> openai.OpenAI:
    url, _ = server
    return openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0)


def requests_seen(kernel: Kernel, model: str) -> list[InferInput]:
    return kernel.component(f"chat:{model}").requests


def raw(
    url: str, path: str, body: bytes | None = None, token: str | None = TOKEN
) -> tuple[int, Any]:
    request = urllib.request.Request(f"{url}{path}", data=body)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


USER = [{"role": "user", "content": "hello there friend"}]


# -- models ------------------------------------------------------------------------------


def test_models_lists_declared_and_installed_models(client):
    ids = {m.id: m for m in client.models.list()}
    assert {"test", "careless-gpt"} <= set(ids)
    assert ids["test"].owned_by == "ferrule-testmodel"
    assert client.models.retrieve("test").id == "test"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("no-such-model")


# -- completions ----------------------------------------------------------------------


def test_non_streaming_completion(client):
    reply = client.chat.completions.create(model="test", messages=USER)
    assert reply.object == "chat.completion" and reply.model == "test"
    assert reply.id.startswith("chatcmpl-")
    choice = reply.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content == "hello there friend"
    assert choice.finish_reason == "stop"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens) == (
        3,
        3,
        6,
    )


def test_streaming_completion_with_usage(client):
    chunks = list(
        client.chat.completions.create(
            model="test",
            messages=USER,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert pieces == ["hello ", "there ", "friend"]  # the model's pieces, one chunk each
    finished = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finished) == 1 and finished[0].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 6
    assert all(c.usage is None for c in chunks[:-1])
    assert len({c.id for c in chunks}) == 1


def test_streaming_without_include_usage_sends_no_usage_chunk(client):
    chunks = list(client.chat.completions.create(model="test", messages=USER, stream=True))
    assert all(c.choices for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_reasoning_options_stop_and_max_tokens(client, server):
    _, kernel = server
    reply = client.chat.completions.create(
        model="test",
        messages=[{"role": "developer", "content": "Be brief."}, *USER],
        reasoning_effort="low",
        temperature=0.2,
        top_p=0.9,
        max_completion_tokens=100,
    )
    message = reply.choices[0].message
    assert message.reasoning_content == "The user wrote 3 words; I repeat them."
    assert reply.usage.completion_tokens_details.reasoning_tokens == 8
    seen = requests_seen(kernel, "test")[-1]
    assert seen.messages[0].role == "system" and seen.messages[0].text == "Be brief."
    assert (seen.reasoning, seen.temperature, seen.top_p, seen.max_tokens) == (
        "low",
        0.2,
        0.9,
        100,
    )

    stopped = client.chat.completions.create(model="test", messages=USER, stop="there")
    assert stopped.choices[0].message.content == "hello "
    cut = client.chat.completions.create(model="test", messages=USER, max_tokens=2)
    assert (cut.choices[0].message.content, cut.choices[0].finish_reason) == (
        "hello there",
        "length",
    )


def test_streamed_reasoning_arrives_as_reasoning_content(client):
    chunks = list(
        client.chat.completions.create(
            model="test", messages=USER, stream=True, reasoning_effort="medium"
        )
    )
    reasoning = "".join(
        getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks
    )
    assert reasoning == "The user wrote 3 words; I repeat them."


def test_response_format_json_schema(client):
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    reply = client.chat.completions.create(
        model="test",
        messages=[{"role": "user", "content": "Oslo"}],
        response_format={"type": "json_schema", "json_schema": {"name": "place", "schema": schema}},
    )
    assert json.loads(reply.choices[0].message.content) == {"city": "Oslo"}


def test_tools_round_trip(client, server):
    _, kernel = server
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Oslo?"}]
    first = client.chat.completions.create(
        model="weather-bot", messages=messages, tools=[WEATHER_TOOL]
    )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    [call] = choice.message.tool_calls
    assert (call.id, call.type, call.function.name) == ("call_weather", "function", "get_weather")
    assert json.loads(call.function.arguments) == {"city": "Oslo"}
    seen = requests_seen(kernel, "weather-bot")[-1]
    assert [t.function.name for t in seen.tools] == ["get_weather"]
    assert seen.tools[0].function.parameters == WEATHER_TOOL["function"]["parameters"]

    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"celsius": 3}'})
    second = client.chat.completions.create(
        model="weather-bot", messages=messages, tools=[WEATHER_TOOL]
    )
    assert second.choices[0].message.content == "It is 3 degrees in Oslo."
    assistant, tool = requests_seen(kernel, "weather-bot")[-1].messages[1:]
    assert assistant.tool_calls[0].arguments == {"city": "Oslo"}
    assert (tool.role, tool.tool_call_id, tool.text) == ("tool", "call_weather", '{"celsius": 3}')


# -- what clients put back (issue 24) ---------------------------------------------------


def test_a_reply_put_back_with_model_dump_is_taken(client, server):
    """pydantic's ``model_dump()`` sends every field, null where unset: function_call,
    audio, annotations, tool_calls, refusal."""
    _, kernel = server
    messages: list[Any] = [{"role": "user", "content": "hello there"}]
    first = client.chat.completions.create(model="test", messages=messages)
    dumped = first.choices[0].message.model_dump()
    assert {"function_call", "audio", "tool_calls", "refusal", "annotations"} <= set(dumped)
    messages += [dumped, {"role": "user", "content": "and again", "name": "sam"}]
    second = client.chat.completions.create(model="test", messages=messages)
    assert second.choices[0].message.content == "and again"
    assistant = requests_seen(kernel, "test")[-1].messages[1]
    assert (assistant.role, assistant.text, assistant.tool_calls) == (
        "assistant",
        "hello there",
        [],
    )


def test_reasoning_content_put_back_is_the_messages_reasoning(client, server):
    _, kernel = server
    messages: list[Any] = [{"role": "user", "content": "think first"}]
    first = client.chat.completions.create(model="test", messages=messages, reasoning_effort="low")
    dumped = first.choices[0].message.model_dump()
    assert dumped["reasoning_content"] == "The user wrote 2 words; I repeat them."
    messages += [dumped, {"role": "user", "content": "once more"}]
    client.chat.completions.create(model="test", messages=messages, reasoning_effort="low")
    assistant = requests_seen(kernel, "test")[-1].messages[1]
    assert [p.text for p in assistant.reasoning] == ["The user wrote 2 words; I repeat them."]


def test_a_tool_call_reply_put_back_whole_round_trips(client):
    messages: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    first = client.chat.completions.create(
        model="weather-bot-again", messages=messages, tools=[WEATHER_TOOL]
    )
    call = first.choices[0].message.tool_calls[0]
    messages.append(first.choices[0].message.model_dump())  # content: None, refusal: None, ...
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "3 degrees"})
    second = client.chat.completions.create(
        model="weather-bot-again", messages=messages, tools=[WEATHER_TOOL]
    )
    assert second.choices[0].message.content == "It is 3 degrees in Oslo."


NEWS_TOOL = {
    "type": "function",
    "function": {
        "name": "get_news",
        "parameters": {"type": "object", "properties": {"topic": {"type": "string"}}},
    },
}


@pytest.mark.parametrize("stream", [False, True])
def test_tool_choice_required_and_named_force_a_call(client, server, stream):
    _, kernel = server

    def call(tool_choice: Any) -> tuple[str, Any, str]:
        options = {"model": "test", "tools": [WEATHER_TOOL, NEWS_TOOL], "tool_choice": tool_choice}
        messages = [{"role": "user", "content": "Oslo"}]
        if not stream:
            choice = client.chat.completions.create(messages=messages, **options).choices[0]
            [made] = choice.message.tool_calls
            return made.function.name, json.loads(made.function.arguments), choice.finish_reason
        chunks = list(client.chat.completions.create(messages=messages, stream=True, **options))
        calls = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
        arguments = json.loads("".join(tc.function.arguments or "" for tc in calls))
        return calls[0].function.name, arguments, chunks[-1].choices[0].finish_reason

    assert call("required") == ("get_weather", {"city": "Oslo"}, "tool_calls")
    named = {"type": "function", "function": {"name": "get_news"}}
    assert call(named) == ("get_news", {"topic": "Oslo"}, "tool_calls")
    assert requests_seen(kernel, "test")[-1].forced_tool == "get_news"
    # "none": the model sees no tools
    reply = client.chat.completions.create(
        model="test", messages=USER, tools=[WEATHER_TOOL], tool_choice="none"
    )
    assert reply.choices[0].message.tool_calls is None
    assert requests_seen(kernel, "test")[-1].tools == []


def test_tool_choice_and_json_mode_reach_an_upstream_openai_api_as_sent(client):
    """Through ferrule's OpenAI provider: ``tool_choice`` is passed on, and a client's
    ``json_object`` stays JSON mode (not a json_schema of any object)."""
    pytest.importorskip("ferrule_openai", reason="the OpenAI provider plugin is not installed")
    from ferrule_kit.content.messages import ToolCall
    from ferrule_kit.testing import chat_completions
    from ferrule_kit.testing.conformance import ScriptedTurn
    from ferrule_kit.testing.loopback import LoopbackServer

    upstream = LoopbackServer(validate=chat_completions.validator())
    upstream.start_in_thread()
    try:

        class Upstream:
            @hookimpl
            def ferrule_resolve_api_model(self, model_id: str, provider: str | None):
                if model_id != "upstream-gpt":
                    return None
                attributes = {
                    "model": "gpt-4o",
                    "base_url": f"{upstream.url}/v1",
                    "api_key": "sk-upstream-0123456789",
                }
                return ModelRoute("openai_language_model", attributes)

        kernel = Kernel(plugins=[kit_plugin, Upstream()])
        kernel.load_plugins()
        with ServerThread(kernel, models=["upstream-gpt"]) as url:  # the operator's: a URL
            near = openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)
            upstream.script(
                chat_completions.reply(ScriptedTurn(text=('{"a": 1}',))),
                chat_completions.reply(
                    ScriptedTurn(
                        tool_calls=(ToolCall("call_1", "get_weather", {"city": "x"}),),
                        finish_reason="tool_calls",
                    )
                ),
            )
            reply = near.chat.completions.create(
                model="upstream-gpt", messages=USER, response_format={"type": "json_object"}
            )
            assert reply.choices[0].message.content == '{"a": 1}'
            named = {"type": "function", "function": {"name": "get_weather"}}
            near.chat.completions.create(
                model="upstream-gpt", messages=USER, tools=[WEATHER_TOOL], tool_choice=named
            )
        upstream.check()
        json_mode, forced = (r.json for r in upstream.requests)
        assert json_mode["response_format"] == {"type": "json_object"}
        assert forced["tool_choice"] == named
    finally:
        upstream.stop_in_thread()


def test_streamed_tool_call_fragments_assemble(client):
    chunks = list(
        client.chat.completions.create(
            model="weather-bot-streaming",
            messages=[{"role": "user", "content": "Weather?"}],
            tools=[WEATHER_TOOL],
            stream=True,
        )
    )
    calls = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert len(calls) > 1  # the arguments arrive in fragments
    assert (calls[0].id, calls[0].function.name, calls[0].index) == (
        "call_weather",
        "get_weather",
        0,
    )
    assert json.loads("".join(c.function.arguments for c in calls)) == {"city": "Oslo"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_images_reach_a_backend_that_takes_them(client, server):
    _, kernel = server
    content = [
        {"type": "text", "text": "What is this?"},
        {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "low"},
        },
    ]
    reply = client.chat.completions.create(
        model="test", messages=[{"role": "user", "content": content}]
    )
    assert reply.choices[0].message.content == "What is this?"
    image = requests_seen(kernel, "test")[-1].messages[0].contents[1]
    assert isinstance(image, ImagePart) and (image.mime_type, image.data) == ("image/png", PNG)


def test_a_backend_that_refuses_images_gives_422(client):
    content = [{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]
    with pytest.raises(openai.UnprocessableEntityError, match="takes text only") as info:
        client.chat.completions.create(
            model="text-only", messages=[{"role": "user", "content": content}]
        )
    assert info.value.code == "unsupported_content"
    with pytest.raises(openai.UnprocessableEntityError):  # streaming: still a status, not a 200
        client.chat.completions.create(
            model="text-only", messages=[{"role": "user", "content": content}], stream=True
        )


def test_concurrent_streams_each_get_their_own_reply(server):
    url, _ = server

    async def one(client: openai.AsyncOpenAI, i: int) -> str:
        stream = await client.chat.completions.create(
            model="slow", messages=[{"role": "user", "content": f"reply number {i}"}], stream=True
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    async def main() -> list[str]:
        async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0) as client:
            return await asyncio.gather(*(one(client, i) for i in range(20)))

    assert asyncio.run(main()) == [f"reply number {i}" for i in range(20)]


def test_a_model_component_deleted_through_the_kernel_api_is_defined_again(client, server):
    url, kernel = server
    client.chat.completions.create(model="test", messages=USER)
    first = kernel.component("chat:test")
    with Runtime(url=url, token=TOKEN) as rt:
        rt.delete("chat:test")
    reply = client.chat.completions.create(model="test", messages=USER)
    assert reply.choices[0].message.content == "hello there friend"
    assert kernel.component("chat:test") is not first


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "param", "message"),
    [
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role", "expected one of"),
        ({"messages": []}, "messages", "must not be empty"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
            "messages[0].content[0].image_url.url",
            "required field missing",
        ),
        ({"temperature": 5}, "temperature", "between 0.0 and 2.0"),
        ({"max_completion_tokens": 0}, "max_completion_tokens", "at least 1"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort", "expected one of"),
        ({"n": 2}, "n", "not supported"),
        ({"tool_choice": "required"}, "tool_choice", "no tools were given"),
        (
            {
                "tools": [WEATHER_TOOL],
                "tool_choice": {"type": "function", "function": {"name": "x"}},
            },
            "tool_choice.function.name",
            "not among the request's tools",
        ),
        (
            {"tools": [WEATHER_TOOL], "tool_choice": {"type": "allowed_tools"}},
            "tool_choice",
            "allowed_tools and custom tools",
        ),
        (
            {"messages": [*USER, {"role": "assistant", "content": "x", "function_call": {}}]},
            "messages[1].function_call",
            "deprecated",
        ),
        ({"extra_body": {"frobnicate": True}}, "frobnicate", "Unrecognized request argument"),
    ],
)
def test_bad_requests_get_400_naming_the_parameter(client, options, param, message):
    arguments = {"model": "test", "messages": USER, **options}
    with pytest.raises(openai.BadRequestError, match=message) as info:
        client.chat.completions.create(**arguments)
    error = info.value.body
    assert error["param"] == param and error["type"] == "invalid_request_error"


def test_unknown_model_is_404(client):
    with pytest.raises(openai.NotFoundError, match="does not exist") as info:
        client.chat.completions.create(model="no-such-model", messages=USER)
    assert info.value.code == "unknown_model" and info.value.body["param"] == "model"


def test_a_misconfigured_model_is_the_servers_fault_not_the_clients(client):
    with pytest.raises(openai.InternalServerError, match="could not be set up") as info:
        client.chat.completions.create(model="misconfigured", messages=USER)
    assert info.value.code == "model_error"


def test_a_wrong_token_is_401(server):
    url, _ = server
    wrong = openai.OpenAI(base_url=f"{url}/v1", api_key="not-the-token", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.chat.completions.create(model="test", messages=USER)
    with pytest.raises(openai.AuthenticationError):
        wrong.models.list()


def test_a_failing_backend(client):
    with pytest.raises(openai.InternalServerError, match="backend exploded") as info:
        client.chat.completions.create(model="failing", messages=USER)
    assert info.value.code == "model_error"
    received = []
    with pytest.raises(openai.APIError, match="backend exploded"):
        for chunk in client.chat.completions.create(model="failing", messages=USER, stream=True):
            received.append(chunk.choices[0].delta.content)
    assert "".join(filter(None, received)) == "partial answer"


def test_a_backend_breaking_the_lm_contract_is_an_internal_error_not_a_broken_response(client):
    with pytest.raises(openai.InternalServerError, match="internal server error"):
        client.chat.completions.create(model="malformed", messages=USER)
    received = []
    with pytest.raises(openai.APIError, match="internal server error"):
        for chunk in client.chat.completions.create(model="malformed", messages=USER, stream=True):
            received.append(chunk.choices[0].delta.content)
    assert received == ["fine "]


def test_backend_keys_never_leave_the_server(server, client):
    url, _ = server
    status, body = raw(
        url,
        "/v1/chat/completions",
        json.dumps({"model": "careless-gpt", "messages": USER}).encode(),
    )
    assert status == 500 and "invalid key ***" in body
    _, models = raw(url, "/v1/models")
    _, types = raw(url, "/ferrule/v1/component_types")
    with pytest.raises(openai.APIError) as info:
        for _ in client.chat.completions.create(model="careless-gpt", messages=USER, stream=True):
            pass
    for text in (body, models, types, str(info.value.body)):
        assert API_KEY not in text and ENV_KEY not in text


def test_body_size_limit_is_413(client, server):
    big = [{"role": "user", "content": "x" * (MAX_BODY + 1)}]
    with pytest.raises(openai.APIStatusError) as info:
        client.chat.completions.create(model="test", messages=big)
    assert info.value.status_code == 413 and info.value.code == "request_too_large"
    url, _ = server
    status, body = raw(url, "/ferrule/v1/call", b"{" + b" " * MAX_BODY + b"}")
    assert status == 413 and json.loads(body)["error"]["kind"] == "request_too_large"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"messages": []}', "model"),
    ],
)
def test_malformed_bodies_get_openai_shaped_400(server, body, expected):
    url, _ = server
    status, text = raw(url, "/v1/chat/completions", body)
    error = json.loads(text)["error"]
    assert status == 400 and expected in error["message"]
    assert set(error) == {"message", "type", "param", "code"}


def test_unknown_routes_get_json_404(server):
    url, _ = server
    status, text = raw(url, "/v1/images/generations", b"{}")
    assert status == 404 and set(json.loads(text)["error"]) == {"message", "type", "param", "code"}


# -- cancellation ------------------------------------------------------------------------


def test_closing_a_stream_cancels_the_generation(client):
    stream = client.chat.completions.create(model="endless", messages=USER, stream=True)
    for _, chunk in zip(range(3), stream, strict=False):
        assert chunk.choices[0].delta.content in ("tick ", None)
    stream.close()
    assert EndlessModel.closed.wait(5)
    produced = EndlessModel.produced
    threading.Event().wait(0.1)
    assert EndlessModel.produced == produced


# -- ferrule's own OpenAI provider as the client ---------------------------------------


def test_ferrule_serve_is_a_backend_for_ferrules_openai_provider(server):
    pytest.importorskip("ferrule_openai", reason="the OpenAI provider plugin is not installed")
    url, _ = server
    request = {"messages": USER, "reasoning": "low"}
    with Runtime() as rt:
        rt.define("test_language_model", "direct", {})
        rt.define(
            "openai_language_model",
            "through",
            {"model": "test", "base_url": f"{url}/v1", "api_key": TOKEN},
        )
        direct = list(rt.call_iter_method("direct", "infer", request))
        through = list(rt.call_iter_method("through", "infer", request))
    assert [_text(i) for i in through] == [_text(i) for i in direct]
    assert through[-1]["finish_reason"] == direct[-1]["finish_reason"] == "stop"
    assert through[-1]["usage"] == direct[-1]["usage"]


def _text(item: dict[str, Any]) -> tuple[str, str]:
    message = item["message"]
    return (
        "".join(p["text"] for p in message["content"]),
        "".join(p["text"] for p in message.get("reasoning", [])),
    )


# -- a real local model ----------------------------------------------------------------


def test_the_offline_default_model_through_the_openai_client(client):
    pytest.importorskip("ferrule_llamacpp", reason="the llama.cpp backend is not installed")
    pytest.importorskip("ferrule_smollm2", reason="the SmolLM2 weights package is not installed")
    from ferrule.models import LocalModel
    from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL

    question = [{"role": "user", "content": "What is the capital of France?"}]
    options = {"max_tokens": 12, "temperature": 0}
    with Runtime() as rt:  # the same model in-process: what the server must pass on
        route = LocalModel(DEFAULT_LOCAL_MODEL).route(rt.kernel)
        rt.define(route.component_type, "smol", route.attributes)
        items = list(rt.call_iter_method("smol", "infer", {"messages": question, **options}))
    expected = "".join(i["message"]["content"][0]["text"] for i in items)
    assert expected

    assert DEFAULT_LOCAL_MODEL in {m.id for m in client.models.list()}
    reply = client.chat.completions.create(model=DEFAULT_LOCAL_MODEL, messages=question, **options)
    assert reply.choices[0].message.content == expected
    assert reply.choices[0].finish_reason == items[-1]["finish_reason"]
    assert reply.usage.completion_tokens == items[-1]["usage"]["output_tokens"]
    stream = client.chat.completions.create(
        model=DEFAULT_LOCAL_MODEL, messages=question, stream=True, **options
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == expected
