"""ferrule-anthropic end to end: the installed plugin, defined in a runtime, against a loopback
server that speaks Anthropic's streaming wire format and refuses malformed requests."""

from __future__ import annotations

import base64
from typing import ClassVar

import pytest
from ferrule import AsyncRuntime
from ferrule_anthropic.testing import (
    count_reply,
    error_reply,
    event_bytes,
    message_events,
    request_problems,
    stream_reply,
)
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import (
    AuthenticationError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderBadRequestError,
    ProviderProtocolError,
    ProviderUnavailableError,
    QuotaExceededError,
    UnsupportedContentError,
)
from ferrule_kit.testing import fold, tiny_png
from ferrule_kit.testing.loopback import Reply
from ferrule_kit.testing.providers import USER, WEATHER, Failure, ProviderConformance, Refusal

# -- the happy paths ---------------------------------------------------------------------


async def test_streamed_text_with_system_and_history(server, claude, api_key):
    server.script(
        stream_reply(
            message_events(text=["Hel", "lo", " there."], input_tokens=21, output_tokens=4)
        )
    )
    items = await claude.collect(
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                USER,
                {"role": "assistant", "content": "Hello!"},
                {"role": "user", "content": "Again?"},
            ]
        },
    )
    assert [i["message"]["content"][0]["text"] for i in items[:-1]] == ["Hel", "lo", " there."]
    assert items[-1] == {
        "message": {"role": "assistant", "content": [{"type": "text", "text": ""}]},
        "finish_reason": "stop",
        "usage": {"input_tokens": 21, "output_tokens": 4},
    }
    sent = server.requests[0]
    assert (
        sent.headers["x-api-key"] == api_key and sent.headers["anthropic-version"] == "2023-06-01"
    )
    assert sent.json["system"] == "Be brief." and sent.json["model"] == "claude-sonnet-4-20250514"
    assert [m["role"] for m in sent.json["messages"]] == ["user", "assistant", "user"]


async def test_tool_call_fragments_and_parallel_calls_keep_their_ids(server, claude):
    server.script(
        stream_reply(
            message_events(
                text=["Checking."],
                tool_calls=[
                    ("toolu_01A", "get_weather", {"city": "Oslo"}),
                    ("toolu_01B", "get_weather", {"city": "Lima, Peru"}),
                ],
            )
        )
    )
    items = await claude.collect({"messages": [USER], "tools": [WEATHER]})
    deltas = [c for i in items for c in i["message"].get("tool_calls", ())]
    assert [d["index"] for d in deltas].count(0) >= 3 and {d["index"] for d in deltas} == {0, 1}
    assert deltas[0]["id"] == "toolu_01A" and all(
        "id" not in d for d in deltas[1:] if d["index"] == 0
    )
    acc = fold(items)
    assert [(c.id, c.name, c.arguments) for c in acc.tool_calls()] == [
        ("toolu_01A", "get_weather", {"city": "Oslo"}),
        ("toolu_01B", "get_weather", {"city": "Lima, Peru"}),
    ]
    assert items[-1]["finish_reason"] == "tool_calls"
    assert server.requests[0].json["tools"][0]["input_schema"]["required"] == ["city"]


async def test_thinking_signature_and_redacted_thinking_go_back_unchanged(server, claude):
    server.script(
        stream_reply(
            message_events(
                reasoning=["Need the ", "weather."],
                signature="EqQBCkYIARgCKkD+sig==",
                redacted=["EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"],
                tool_calls=[("toolu_9", "get_weather", {"city": "Oslo"})],
            )
        ),
        stream_reply(message_events(text=["It is 3°C."])),
    )
    first = {"messages": [USER], "tools": [WEATHER], "reasoning": "low"}
    items = await claude.collect(first)
    reasoning = [p for i in items for p in i["message"].get("reasoning", ())]
    assert [p["text"] for p in reasoning if p["text"]] == ["Need the ", "weather."]
    message = fold(items).message()
    history = [
        USER,
        message.to_dict(),
        {"role": "tool", "tool_call_id": "toolu_9", "content": "3°C"},
    ]
    items = await claude.collect({**first, "messages": history})
    assert fold(items).message().text == "It is 3°C."
    request = server.requests[0].json
    assert (
        request["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        and request["max_tokens"] > 2048
    )
    assert server.requests[1].json["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "Need the weather.", "signature": "EqQBCkYIARgCKkD+sig=="},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},
        {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Oslo"}},
    ]
    assert server.requests[1].json["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_9", "content": "3°C"}
    ]


async def test_cumulative_usage_is_counted_once(server, claude):
    events = message_events(text=["a", "b", "c"], input_tokens=30)
    final_delta = events.index(next(e for e in events if e[0] == "message_delta"))
    running = [
        ("message_delta", {"delta": {"stop_reason": None}, "usage": {"output_tokens": n}})
        for n in (2, 5, 9)
    ]
    events[final_delta] = (
        "message_delta",
        {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 11}},
    )
    server.script(stream_reply(events[:final_delta] + running + events[final_delta:]))
    items = await claude.collect({"messages": [USER]})
    assert items[-1]["usage"] == {"input_tokens": 30, "output_tokens": 11}


async def test_base64_image_is_sent(server, claude):
    data = base64.b64encode(tiny_png()).decode()
    server.script(stream_reply(message_events(text=["A red square."])))
    await claude.collect(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:image/png;base64,{data}"},
                        },
                    ],
                }
            ]
        },
    )
    assert server.requests[0].json["messages"][0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": data},
    }


# -- named events and failures mid-stream ------------------------------------------------


async def test_mid_stream_error_event_ends_the_stream_with_one_typed_error(server, claude):
    events = message_events(text=["Par", "tial"])
    cut = next(i for i, e in enumerate(events) if e[0] == "content_block_stop")
    server.script(
        stream_reply(
            [
                *events[:cut],
                ("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ]
        )
    )
    items, error = await claude.collect_until_error({"messages": [USER]})
    assert [i["message"]["content"][0]["text"] for i in items] == ["Par", "tial"]
    assert (
        isinstance(error, ProviderUnavailableError)
        and error.details["provider_message"] == "Overloaded"
    )
    assert len(server.requests) == 1  # a stream that started is never replayed


# -- what every provider does alike: faults, retries, keys ---------------------------------


class TestAnthropicProvider(ProviderConformance):
    KEY_VARIABLES = ("ANTHROPIC_API_KEY",)
    REFUSED: ClassVar[dict[str, Refusal]] = {
        "audio": (
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            UnsupportedContentError,
            ("Anthropic", "audio"),
        ),
        "tiff": (
            {"type": "image_url", "image_url": {"url": "data:image/tiff;base64,SUkqAA=="}},
            UnsupportedContentError,
            ("Anthropic", "image/tiff"),
        ),
    }
    RETRYABLE: ClassVar[dict[str, Reply]] = {
        "429-retry-after": error_reply(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
            headers={"retry-after": "0"},
        ),
        "429-retry-after-ms": error_reply(
            429, "rate_limit_error", "slow down", headers={"retry-after-ms": "10"}
        ),
        "500": error_reply(500, "api_error", "Internal server error", headers={"retry-after": "0"}),
        "529": error_reply(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"}),
        "503": error_reply(503, "api_error", "unavailable", headers={"retry-after": "0"}),
        "reset-before-first-byte": Reply.reset(),
    }
    TERMINAL: ClassVar[dict[str, Failure]] = {
        "401": (
            error_reply(401, "authentication_error", "invalid x-api-key"),
            AuthenticationError,
            "invalid x-api-key",
        ),
        "400": (
            error_reply(400, "invalid_request_error", "messages: roles must alternate"),
            ProviderBadRequestError,
            "alternate",
        ),
        "403": (
            error_reply(403, "permission_error", "no access to this model"),
            PermissionDeniedError,
            "no access",
        ),
        # Anthropic reports an exhausted balance at either status.
        **{
            f"billing-{status}": (
                error_reply(status, "billing_error", "Your credit balance is too low"),
                QuotaExceededError,
                "credit balance",
            )
            for status in (402, 429)
        },
    }

    @pytest.fixture
    def provider(self, claude):
        return claude


# -- count_tokens ------------------------------------------------------------------------


async def test_count_tokens_asks_anthropics_count_endpoint_with_infers_body(server, claude):
    """The body ``infer`` would send (system, tools, tool choice, thinking), less what the
    count endpoint refuses; Anthropic's count is the answer, and nothing is generated."""
    rt, name = claude.runtime, claude.name
    inputs = {
        "messages": [{"role": "system", "content": "Be brief."}, USER],
        "tools": [WEATHER],
        "reasoning": "low",
        "stop": ["###"],
    }
    server.script(count_reply(37))
    assert await rt.call_method(name, "count_tokens", inputs) == {"input_tokens": 37}
    (sent,) = server.requests  # the validator checked it as Anthropic would
    assert sent.path == "/v1/messages/count_tokens"
    server.script(stream_reply(message_events(text=["Hi."])))
    await claude.collect(inputs)
    messages_body = server.requests[1].json
    assert server.requests[1].path == "/v1/messages"
    unsent = {"max_tokens", "stream", "stop_sequences"}
    assert unsent <= set(messages_body)
    assert sent.json == {k: v for k, v in messages_body.items() if k not in unsent}
    assert sent.json["thinking"]["type"] == "enabled" and sent.json["tools"]


async def test_a_count_tokens_failure_is_the_providers_typed_error(server, claude):
    rt, name = claude.runtime, claude.name
    server.script(error_reply(404, "not_found_error", "model: claude-nope"))
    with pytest.raises(ModelNotFoundError, match="claude-nope"):
        await rt.call_method(name, "count_tokens", {"messages": [USER]})
    server.script(Reply.json({"tokens": 3}))
    with pytest.raises(ProviderProtocolError, match="input_tokens"):
        await rt.call_method(name, "count_tokens", {"messages": [USER]})


def test_the_validator_refuses_a_count_with_generation_settings():
    headers = {
        "x-api-key": "k",
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
    }
    body = {"model": "claude-x", "messages": [{"role": "user", "content": "Hi"}]}
    assert request_problems(body, headers, counting=True) == []
    assert request_problems({**body, "max_tokens": 5, "stream": True}, headers, counting=True) == [
        "body: unknown field(s) ['max_tokens', 'stream']"
    ]
    assert "max_tokens: required integer >= 1" in request_problems(body, headers)


async def test_a_retired_model_reaches_the_user_as_the_providers_error(server):
    async with AsyncRuntime() as rt:
        await rt.define(
            "claude_language_model",
            "old",
            {
                "model": "claude-3-haiku-20240307",
                "api_key": "sk-ant-retired-test",
                "base_url": server.url,
            },
        )
        server.script(error_reply(404, "not_found_error", "model: claude-3-haiku-20240307"))
        with pytest.raises(ModelNotFoundError) as info:
            async for _ in rt.call_iter_method("old", "infer", {"messages": [USER]}):
                pass
    assert "model: claude-3-haiku-20240307" in info.value.message
    assert info.value.details["provider_message"] == "model: claude-3-haiku-20240307"
    assert (
        info.value.details["status"] == 404
        and info.value.details.get("request_id") == "req_loopback"
    )


# -- keys --------------------------------------------------------------------------------


async def test_key_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    server.script(stream_reply(message_events(text=["ok"])))
    async with AsyncRuntime() as rt:
        await rt.define(
            "anthropic_language_model", "c", {"model": "claude-x", "base_url": server.url}
        )
        async for _ in rt.call_iter_method("c", "infer", {"messages": [USER]}):
            pass
    assert server.requests[0].headers["x-api-key"] == "sk-ant-from-env"


# -- raw framing -------------------------------------------------------------------------


async def test_crlf_framing_and_comments_are_read(server, claude):
    raw = b"".join(event_bytes(*e) for e in message_events(text=["x", "y"]))
    server.script(Reply.sse([b": keep-alive comment\n\n", raw.replace(b"\n", b"\r\n")]))
    items = await claude.collect({"messages": [USER]})
    assert fold(items).message().text == "xy"


def test_sync_runtime_through_api_model(api_key):
    from ferrule import APIModel, Runtime
    from ferrule_anthropic.testing import validator
    from ferrule_kit.testing.loopback import LoopbackServer

    with LoopbackServer(validate=validator) as server, Runtime() as rt:
        server.script(stream_reply(message_events(text=["Ahoy", "!"])))
        route = APIModel("claude-3-5-haiku-20241022", api_key=api_key, base_url=server.url).route(
            rt.kernel
        )
        rt.define(route.component_type, "claude", route.attributes)
        items = list(rt.call_iter_method("claude", "infer", {"messages": [USER]}))
        rt.delete("claude")
    assert fold(items).message().text == "Ahoy!"
    assert server.requests[0].json["model"] == "claude-3-5-haiku-20241022"


# -- the endpoint from the environment ------------------------------------------------------


async def test_anthropic_base_url_moves_the_endpoint_when_no_base_url_is_given(server, monkeypatch):
    # Anthropic's SDK reads ANTHROPIC_BASE_URL: a script written for it runs unchanged here.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url + "/")
    server.script(stream_reply(message_events(text=["Hello"])))
    async with AsyncRuntime() as rt:
        await rt.define(
            "anthropic_language_model",
            "claude",
            {"model": "claude-sonnet-4-20250514", "api_key": "k"},
        )
        items = [i async for i in rt.call_iter_method("claude", "infer", {"messages": [USER]})]
    assert fold(items).message().text == "Hello"
    assert [r.path for r in server.requests] == ["/v1/messages"]


async def test_a_trailing_user_message_lets_a_model_that_refuses_prefill_continue(server):
    server.script(stream_reply(message_events(text=["42."])))
    async with AsyncRuntime() as rt:
        await rt.define(
            "anthropic_language_model",
            "c",
            {
                "model": "claude-sonnet-4-6",
                "base_url": server.url,
                "api_key": "sk-ant-x",
                "trailing_user_message": "continue",
            },
        )
        prefill = {"role": "assistant", "content": "Let me add them."}
        items = [
            item async for item in rt.call_iter_method("c", "infer", {"messages": [USER, prefill]})
        ]
        assert "".join(fold(items).text) == "42."
        with pytest.raises(InvalidInputError) as error:
            await rt.define(
                "anthropic_language_model",
                "d",
                {"model": "claude-sonnet-4-6", "api_key": "k", "trailing_user_message": ""},
            )
        assert "trailing_user_message" in str(error.value)
    assert server.requests[0].json["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "continue"}],
    }
