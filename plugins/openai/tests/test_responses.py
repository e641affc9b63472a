"""ferrule-openai's Responses API component against a loopback server speaking the
Responses wire (typed SSE events): the conformance suite, request shapes, the stream
translation (text, reasoning items round-tripped with their encrypted content, function
calls, usage, finish reasons), typed errors, secrets, and ferrule's own ``ferrule serve``
as the server. Nothing reaches the internet."""

from __future__ import annotations

import base64
import json
from typing import ClassVar

import pytest
import pytest_asyncio
from ferrule import APIModel, AsyncRuntime, Runtime
from ferrule.testing import AgentConformance
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.content.messages import converter
from ferrule_kit.errors import (
    AuthenticationError,
    ProviderBadRequestError,
    ProviderUnavailableError,
    RateLimitError,
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
from ferrule_kit.testing.chat_completions import error_reply
from ferrule_kit.testing.loopback import Reply, server_fixture, sse
from ferrule_kit.testing.providers import (
    USER,
    Definer,
    Failure,
    ProviderConformance,
    ProviderUnderTest,
    Refusal,
    collect,
)
from ferrule_kit.testing.strategies import cut, texts, tool_calls
from ferrule_openai.responses_wire import StreamTranslator, response_items
from ferrule_openai.testing import (
    WIRE,
    ResponsesCall,
    ResponsesReasoning,
    response_object,
    responses_events,
    responses_reply,
    stream_events,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

KEY = "sk-proj-LOOPBACK-responses-secret-0123456789"


server = server_fixture()


@pytest_asyncio.fixture
async def runtime(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    async with AsyncRuntime() as rt:
        yield rt


@pytest_asyncio.fixture
async def define(runtime):
    """define(model="gpt-4.1", **attributes) -> component name, on the loopback API."""
    defaults = {"model": "gpt-4.1", "max_retries": 1}
    return Definer(runtime, "openai_responses_language_model", "responses", defaults)


def turn_reply(turn: ScriptedTurn) -> Reply:
    """A conformance turn in the Responses wire."""
    events = responses_events(
        turn.text,
        calls=[ResponsesCall(c.name, c.arguments, c.id) for c in turn.tool_calls],
        reasoning=[ResponsesReasoning("".join(turn.reasoning), "enc", chunks=turn.reasoning)]
        if turn.reasoning
        else [],
        status="incomplete" if turn.finish_reason == "length" else "completed",
        incomplete_reason="max_output_tokens" if turn.finish_reason == "length" else None,
    )
    return stream_events(events, delay=turn.chunk_delay)


class TestResponsesConformance(LanguageModelConformance, AgentConformance):
    @pytest_asyncio.fixture
    async def lm(self, define, runtime, server):
        name = await define("gpt-4.1")
        yield LanguageModelUnderTest(
            runtime,
            name,
            Capabilities(
                reasoning=True, stop=False, images=True, image_urls=True, output_schema=True
            ),
            script=lambda turn, inputs: server.script(turn_reply(turn)),
        )


# -- requests -------------------------------------------------------------------------


async def test_request_shape(define, runtime, server):
    name = await define("gpt-4.1")
    server.script(responses_reply("ok"))
    await collect(
        runtime,
        name,
        {
            "messages": [{"role": "system", "content": "Be brief."}, USER],
            "temperature": 0.2,
            "top_p": 0.9,
            "max_tokens": 50,
        },
    )
    request = server.requests[0]
    body = request.json
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert body == {
        "model": "gpt-4.1",
        "instructions": "Be brief.",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}
        ],
        "stream": True,
        "store": False,
        "temperature": 0.2,
        "top_p": 0.9,
        "max_output_tokens": 50,
    }


async def test_reasoning_model_request(define, runtime, server):
    name = await define("o4-mini", reasoning_summary="detailed")
    server.script(responses_reply("ok"))
    await collect(runtime, name, {"messages": [USER], "temperature": 0.5, "reasoning": "high"})
    body = server.requests[0].json
    assert body["reasoning"] == {"effort": "high", "summary": "detailed"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert "temperature" not in body  # reasoning models refuse sampling options


async def test_stop_is_refused_before_any_request(define, runtime, server):
    name = await define()
    with pytest.raises(InvalidInputError) as info:
        await collect(runtime, name, {"messages": [USER], "stop": ["x"]})
    assert info.value.errors[0]["path"] == "$.stop"
    assert server.requests == []


async def test_tools_round_trip(define, runtime, server):
    """function_call items come back as tool calls; the next request carries the call and
    its function_call_output, and tool_choice in the Responses shape."""
    name = await define()
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather of a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    server.script(responses_reply(calls=[ResponsesCall("get_weather", {"city": "Paris"}, "c1")]))
    items = await collect(
        runtime,
        name,
        {
            "messages": [USER],
            "tools": tools,
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        },
    )
    check_stream(items)
    acc = fold(items)
    assert acc.finish_reason == "tool_calls"
    [call] = acc.tool_calls()
    assert (call.id, call.name, call.arguments) == ("c1", "get_weather", {"city": "Paris"})
    first = server.requests[0].json
    assert first["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    assert first["tool_choice"] == {"type": "function", "name": "get_weather"}

    server.script(responses_reply("Sunny in Paris."))
    history = [
        USER,
        {
            "role": "assistant",
            "content": [],
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "sunny"}]},
    ]
    items = await collect(runtime, name, {"messages": history, "tools": tools})
    assert fold(items).message().text == "Sunny in Paris."
    assert server.requests[1].json["input"][1:] == [
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    ]


async def test_reasoning_items_round_trip_with_encrypted_content(define, runtime, server):
    name = await define("o4-mini")
    reasoning = ResponsesReasoning("Paris is the capital.", "gAAAA-opaque", "rs_42")
    server.script(
        responses_reply(
            calls=[ResponsesCall("lookup", {"q": "capital"}, "c9")],
            reasoning=[reasoning],
            usage=(30, 20, 12),
        )
    )
    items = await collect(runtime, name, {"messages": [USER], "reasoning": True})
    check_stream(items)
    message = fold(items).message()
    assert [r.text for r in message.reasoning] == ["Paris is the capital."]
    assert items[-1]["usage"] == {"input_tokens": 30, "output_tokens": 20, "reasoning_tokens": 12}

    server.script(responses_reply("Paris."))
    from ferrule_kit.models.lm import dump

    assistant = dump(message)
    await collect(
        runtime,
        name,
        {
            "messages": [
                USER,
                assistant,
                {"role": "tool", "tool_call_id": "c9", "content": "Paris"},
            ],
            "reasoning": True,
        },
    )
    sent = server.requests[1].json["input"]
    assert sent[1] == {
        "type": "reasoning",
        "id": "rs_42",
        "summary": [{"type": "summary_text", "text": "Paris is the capital."}],
        "encrypted_content": "gAAAA-opaque",
    }
    assert sent[2]["type"] == "function_call" and sent[3]["type"] == "function_call_output"


async def test_foreign_reasoning_is_not_sent(define, runtime, server):
    """A reasoning part signed by another provider means nothing to OpenAI."""
    name = await define()
    server.script(responses_reply("ok"))
    assistant = {
        "role": "assistant",
        "content": "Earlier.",
        "reasoning": [{"type": "text", "text": "thought", "signature": "anthropic-sig"}],
    }
    await collect(runtime, name, {"messages": [USER, assistant, USER]})
    assert [i["type"] for i in server.requests[0].json["input"]] == ["message"] * 3


async def test_structured_output(define, runtime, server):
    name = await define()
    schema = {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": False,
    }
    server.script(responses_reply(['{"title": ', '"Dune"}']), responses_reply("{}"))
    items = await collect(runtime, name, {"messages": [USER], "output_schema": schema})
    assert json.loads(fold(items).message().text) == {"title": "Dune"}
    assert server.requests[0].json["text"] == {
        "format": {"type": "json_schema", "name": "output", "schema": schema, "strict": True}
    }
    await collect(runtime, name, {"messages": [USER], "output_schema": {"type": "object"}})
    assert server.requests[1].json["text"] == {"format": {"type": "json_object"}}


async def test_images_on_the_wire_and_audio_refused(define, runtime, server):
    name = await define()
    png = base64.b64encode(tiny_png()).decode()
    server.script(responses_reply("a dot"))
    content = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]
    await collect(runtime, name, {"messages": [{"role": "user", "content": content}]})
    assert server.requests[0].json["input"][0]["content"] == [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{png}"},
        {"type": "input_image", "image_url": "https://example.com/cat.png"},
    ]
    wav = base64.b64encode(tiny_wav()).decode()
    audio = {"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}}
    with pytest.raises(UnsupportedContentError) as info:
        await collect(runtime, name, {"messages": [{"role": "user", "content": [audio]}]})
    assert info.value.errors[0]["path"] == "$.messages[0].content[0]"
    assert len(server.requests) == 1


# -- errors ---------------------------------------------------------------------------


class TestResponsesProvider(ProviderConformance):
    KEY_VARIABLES = ("OPENAI_API_KEY",)
    ENDPOINT_VARIABLES = ("OPENAI_BASE_URL",)
    REFUSED: ClassVar[dict[str, Refusal]] = {
        "audio": (
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            UnsupportedContentError,
            ("audio",),
        ),
    }
    RETRYABLE: ClassVar[dict[str, Reply]] = {
        "429": error_reply(429, "Rate limit reached", {"retry-after": "0"}),
        "503": error_reply(503, "it went wrong", {"retry-after": "0"}),
        "reset-before-first-byte": Reply.reset(),
    }
    TERMINAL: ClassVar[dict[str, Failure]] = {
        "400": (error_reply(400, "it went wrong"), ProviderBadRequestError, "it went wrong"),
        "401": (error_reply(401, "it went wrong"), AuthenticationError, "it went wrong"),
    }

    @pytest_asyncio.fixture
    async def provider(self, runtime, server):
        return await ProviderUnderTest.define(
            runtime, server, WIRE, "openai_responses_language_model", "gpt-4.1", KEY, path=None
        )


async def test_failed_event_mid_stream(define, runtime, server):
    name = await define()
    failed = {
        "type": "response.failed",
        "response": {
            "id": "resp_1",
            "status": "failed",
            "error": {"code": "server_error", "message": "The model crashed."},
        },
    }
    server.script(
        Reply.sse(
            [
                sse({"type": "response.output_text.delta", "item_id": "m", "delta": "Half"}),
                sse(failed, event="response.failed"),
            ]
        )
    )
    with pytest.raises(ProviderUnavailableError, match="The model crashed"):
        await collect(runtime, name, {"messages": [USER]})


async def test_error_event(define, runtime, server):
    name = await define()
    event = {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down.", "param": None}
    server.script(Reply.sse([sse(event, event="error")]))
    with pytest.raises(RateLimitError, match="Slow down"):
        await collect(runtime, name, {"messages": [USER]})


async def test_incomplete_response_is_length(define, runtime, server):
    name = await define()
    events = responses_events(
        ["partial"], status="incomplete", incomplete_reason="max_output_tokens"
    )
    server.script(Reply.sse([sse(e, event=e["type"]) for e in events]))
    items = await collect(runtime, name, {"messages": [USER], "max_tokens": 3})
    assert items[-1]["finish_reason"] == "length"


# -- the whole response ---------------------------------------------------------------


def test_whole_response_translates():
    response = response_object(
        [
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "hm"}],
                "encrypted_content": "e",
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi!"}],
            },
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a": 1}'},
        ],
        usage=(5, 6, 2),
    )
    items = list(response_items(response))
    check_stream(items)
    acc = fold(items)
    message = acc.message()
    assert message.text == "Hi!" and message.reasoning[0].text == "hm"
    assert [(c.name, c.arguments) for c in message.tool_calls] == [("f", {"a": 1})]
    assert acc.finish_reason == "tool_calls"
    assert acc.usage == {"input_tokens": 5, "output_tokens": 6, "reasoning_tokens": 2}


async def test_server_sending_only_the_completed_response(define, runtime, server):
    name = await define()
    response = response_object(
        [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Whole."}],
            }
        ]
    )
    server.script(Reply.sse([sse({"type": "response.completed", "response": response})]))
    items = await collect(runtime, name, {"messages": [USER]})
    assert fold(items).message().text == "Whole."


# -- resolution and ferrule serve ------------------------------------------------------


def test_provider_openai_responses_routes_to_the_component():
    from ferrule_kit import kit_plugin

    kernel = Kernel(plugins=[kit_plugin])
    route = APIModel("gpt-5", provider="openai-responses").route(kernel)
    assert route.component_type == "openai_responses_language_model"
    assert APIModel("gpt-5").route(kernel).component_type == "openai_language_model"


def test_ferrule_serve_is_a_responses_backend(monkeypatch):
    """Our Responses client against our Responses server (`ferrule serve`'s /v1/responses)
    and its echoing test model: reasoning comes back and is sent back."""
    from ferrule.server import ServerThread

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ServerThread() as url, Runtime() as rt:
        route = APIModel("test", provider="openai-responses", base_url=url + "/v1").route(rt.kernel)
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
        # The next turn sends the reasoning item back; the server takes it.
        from ferrule_kit.models.lm import dump

        inputs["messages"] += [dump(message), {"role": "user", "content": "again please"}]
        items = list(rt.call_iter_method("remote", "infer", inputs))
        assert fold(items).message().text == "again please"


# -- the stream parser on any chunking --------------------------------------------------


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.lists(texts, max_size=5),
    reasoning=st.lists(st.tuples(texts, st.text(min_size=1, max_size=8)), max_size=2),
    calls=tool_calls,
    cuts=st.lists(st.integers(0, 10_000), max_size=20),
)
def test_any_chunking_folds_back_to_the_turn(text, reasoning, calls, cuts):
    """The SSE bytes of a turn, cut anywhere, parse (the kit's SSE reader) and translate
    back to the turn's text, reasoning (with signatures) and calls."""
    import asyncio

    from ferrule_kit.network.sse import sse_events

    events = responses_events(
        text,
        calls=[ResponsesCall(n, a, f"c{i}") for i, (n, a) in enumerate(calls)],
        reasoning=[ResponsesReasoning(s, e, f"rs_{i}") for i, (s, e) in enumerate(reasoning)],
    )
    raw = b"".join(sse(e, event=e["type"]) for e in events)
    chunks = cut(raw, cuts)

    async def run():
        async def source():
            for chunk in chunks:
                yield chunk

        translator = StreamTranslator()
        items = []
        async for event in sse_events(source()):
            items.extend(translator.feed(json.loads(event.data)))
        translator.check_complete()
        return items

    items = asyncio.run(run())
    check_stream(items)
    acc = fold(items)
    message = acc.message()
    assert message.text == "".join(text)
    assert [r.text for r in message.reasoning] == [s for s, _ in reasoning]
    assert [json.loads(r.signature)["encrypted_content"] for r in message.reasoning] == [
        e for _, e in reasoning
    ]
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        (f"c{i}", n, a) for i, (n, a) in enumerate(calls)
    ]
    assert acc.finish_reason == ("tool_calls" if calls else "stop")


async def test_message_items_sent_whole_after_reasoning(define, runtime, server):
    """Text that comes only in its message's done item (no deltas) is not lost, after a
    streamed reasoning item; a message that was streamed is not repeated."""
    name = await define()
    events = responses_events(["Streamed."], reasoning=[ResponsesReasoning("hm", "e", "rs_1")])
    whole = {
        "type": "message",
        "id": "msg_2",
        "role": "assistant",
        "content": [{"type": "output_text", "text": " Whole."}],
    }
    events.insert(-1, {"type": "response.output_item.done", "output_index": 2, "item": whole})
    server.script(Reply.sse([sse(e, event=e["type"]) for e in events]))
    items = await collect(runtime, name, {"messages": [USER]})
    check_stream(items)
    assert fold(items).message().text == "Streamed. Whole."


# -- provider tools: OpenAI runs them ------------------------------------------------------

WEB_SEARCH_CALL = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "France news"},
}


def searched_then_said(text: str) -> Reply:
    """A turn whose first output item is a finished web search, then a message."""
    events = responses_events([text])
    search = [
        {"type": "response.output_item.added", "output_index": 0, "item": {**WEB_SEARCH_CALL}},
        {"type": "response.web_search_call.completed", "output_index": 0, "item_id": "ws_1"},
        {"type": "response.output_item.done", "output_index": 0, "item": WEB_SEARCH_CALL},
    ]
    return stream_events([events[0], *search, *events[1:]])


async def test_provider_tools_are_sent_and_their_work_kept_not_sent_back(define, runtime, server):
    name = await define()
    server.script(searched_then_said("France held an election."), responses_reply("Yes."))
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    first = {
        "messages": [USER],
        "tools": [weather],
        "provider_tools": [{"type": "web_search_preview", "search_context_size": "low"}],
    }
    items = [item async for item in runtime.call_iter_method(name, "infer", first)]
    sent = server.requests[0].json["tools"]
    assert [t["type"] for t in sent] == ["function", "web_search_preview"]
    assert sent[1] == {"type": "web_search_preview", "search_context_size": "low"}
    reply = fold(items)
    assert "".join(reply.text) == "France held an election."
    [kept] = reply.reasoning
    assert kept.text == "" and json.loads(kept.signature)["item"] == WEB_SEARCH_CALL
    again = {"messages": [USER, converter.unstructure(reply.message()), USER]}
    await collect(runtime, name, again)
    second = server.requests[1].json["input"]
    assert [i.get("type") for i in second] == ["message", "message", "message"]
    assert second[1]["content"] == [{"type": "output_text", "text": "France held an election."}]


async def test_the_host_limits_the_provider_tools(define, runtime, server):
    name = await define(server_tools=["file_search"])
    request = {"messages": [USER], "provider_tools": [{"type": "web_search_preview"}]}
    with pytest.raises(InvalidInputError) as error:
        await collect(runtime, name, request)
    assert error.value.errors[0]["path"] == "$.provider_tools[0].type"
    assert server.requests == []
