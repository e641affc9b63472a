"""ferrule-gemini end to end: the installed plugin, defined in a runtime, against a loopback
server that speaks Gemini's streaming wire format and refuses malformed requests."""

from __future__ import annotations

import base64
import json
import time

import pytest
from ferrule import AsyncRuntime
from ferrule_gemini.testing import (
    error_body,
    error_reply,
    rate_limited,
    reply_records,
    stream_reply,
)
from ferrule_kernel import configure_logging
from ferrule_kit.errors import (
    AuthenticationError,
    MissingAPIKeyError,
    ModelError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderBadRequestError,
    ProviderProtocolError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    QuotaExceededError,
    RateLimitError,
    StreamInterruptedError,
    UnsupportedContentError,
)
from ferrule_kit.testing import fold, tiny_png, tiny_wav
from ferrule_kit.testing.loopback import Pause, Reply, Reset, sse

USER = {"role": "user", "content": [{"type": "text", "text": "Hi"}]}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather now",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
SIG = base64.b64encode(b"\x12\x0a opaque thought signature").decode()
RETIRED = (
    "models/gemini-1.5-flash is not found for API version v1beta, or is not supported for "
    "generateContent. Call ListModels to see the list of available models and their supported methods."
)


async def run(gemini, inputs):
    rt, name = gemini
    return [item async for item in rt.call_iter_method(name, "infer", inputs)]


async def run_until_error(gemini, inputs):
    rt, name = gemini
    items = []
    with pytest.raises(ModelError) as info:
        async for item in rt.call_iter_method(name, "infer", inputs):
            items.append(item)
    return items, info.value


def texts(items):
    return [i["message"]["content"][0]["text"] for i in items if i["message"]["content"][0]["text"]]


# -- the happy paths ---------------------------------------------------------------------


async def test_streamed_text_with_system_and_history(server, gemini, api_key):
    server.script(stream_reply(reply_records(text=["Hel", "lo", " there."], prompt_tokens=21)))
    items = await run(
        gemini,
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                USER,
                {"role": "assistant", "content": "Hello!"},
                {"role": "user", "content": "Again?"},
            ]
        },
    )
    assert texts(items) == ["Hel", "lo", " there."]
    assert items[-1]["finish_reason"] == "stop" and items[-1]["usage"] == {
        "input_tokens": 21,
        "output_tokens": 7,
    }
    sent = server.requests[0]
    assert sent.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent" and sent.query == {
        "alt": "sse"
    }
    assert sent.headers["x-goog-api-key"] == api_key
    assert sent.json["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert [c["role"] for c in sent.json["contents"]] == ["user", "model", "user"]


async def test_whole_function_calls_in_parallel_get_ids_and_results_go_back_by_name(server, gemini):
    server.script(
        stream_reply(
            reply_records(
                text=["Checking."],
                tool_calls=[("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Lima"})],
            )
        ),
        stream_reply(reply_records(text=["Oslo 3°C, Lima 20°C."])),
    )
    first = {"messages": [USER], "tools": [WEATHER]}
    items = await run(gemini, first)
    assert items[-1]["finish_reason"] == "tool_calls"
    calls = fold(items).tool_calls()
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Oslo"}),
        ("get_weather", {"city": "Lima"}),
    ]
    assert len({c.id for c in calls}) == 2 and all(c.id for c in calls)
    message = fold(items).message()
    history = [
        USER,
        message.to_dict(),
        {"role": "tool", "tool_call_id": calls[0].id, "content": '{"temp_c": 3}'},
        {"role": "tool", "tool_call_id": calls[1].id, "content": "20°C"},
    ]
    items = await run(gemini, {**first, "messages": history})
    assert fold(items).message().text == "Oslo 3°C, Lima 20°C."
    second = server.requests[1].json
    assert second["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"temp_c": 3}}},
            {"functionResponse": {"name": "get_weather", "response": {"result": "20°C"}}},
        ],
    }
    assert server.requests[0].json["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Weather now",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {"city": {"type": "STRING"}},
                        "required": ["city"],
                    },
                }
            ]
        }
    ]


async def test_thoughts_stream_as_reasoning_and_signatures_go_back_on_their_part(server, gemini):
    server.script(
        stream_reply(
            reply_records(
                reasoning=["Weather ", "needs a tool."],
                tool_calls=[("get_weather", {"city": "Oslo"})],
                signature=SIG,
            )
        ),
        stream_reply(reply_records(text=["It is 3°C."], signature=SIG[::-1])),
        stream_reply(reply_records(text=["Bye."])),
    )
    first = {"messages": [USER], "tools": [WEATHER], "reasoning": "medium"}
    items = await run(gemini, first)
    reasoning = [p["text"] for i in items for p in i["message"].get("reasoning", ()) if p["text"]]
    assert reasoning == ["Weather ", "needs a tool."] and texts(items) == []
    assert server.requests[0].json["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 8192,
    }
    call_turn = fold(items).message()
    history = [
        USER,
        call_turn.to_dict(),
        {"role": "tool", "tool_call_id": call_turn.tool_calls[0].id, "content": "3"},
    ]
    items = await run(gemini, {**first, "messages": history})
    answer = fold(items).message()
    assert server.requests[1].json["contents"][1]["parts"] == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": SIG}
    ]
    await run(
        gemini,
        {**first, "messages": [*history, answer.to_dict(), {"role": "user", "content": "Thanks"}]},
    )
    assert server.requests[2].json["contents"][3]["parts"] == [
        {"text": "It is 3°C.", "thoughtSignature": SIG[::-1]}
    ]


async def test_usage_is_the_last_report_not_a_sum(server, gemini):
    server.script(
        stream_reply(reply_records(text=["a", "b", "c", "d"], reasoning=["hm"], prompt_tokens=40))
    )
    items = await run(gemini, {"messages": [USER]})
    # candidates: 2 per text record + 1 at the end; thoughts: 3 (every record repeats the totals)
    assert items[-1]["usage"] == {"input_tokens": 40, "output_tokens": 12, "reasoning_tokens": 3}


async def test_images_and_audio_go_inline(server, gemini):
    png, wav = base64.b64encode(tiny_png()).decode(), base64.b64encode(tiny_wav()).decode()
    server.script(stream_reply(reply_records(text=["A red square and silence."])))
    await run(
        gemini,
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
                        {"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}},
                    ],
                }
            ]
        },
    )
    assert server.requests[0].json["contents"][0]["parts"][1:] == [
        {"inlineData": {"mimeType": "image/png", "data": png}},
        {"inlineData": {"mimeType": "audio/wav", "data": wav}},
    ]


@pytest.mark.parametrize(
    ("part", "content_type"),
    [
        ({"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}, "image_url"),
        ({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wma"}}, "audio"),
    ],
)
async def test_unsupported_content_is_refused_before_any_request(
    server, gemini, part, content_type
):
    rt, name = gemini
    with pytest.raises(UnsupportedContentError) as info:
        async for _ in rt.call_iter_method(
            name, "infer", {"messages": [{"role": "user", "content": [part]}]}
        ):
            pass
    assert info.value.details == {
        **info.value.details,
        "provider": "gemini",
        "content_type": content_type,
    }
    assert server.requests == []


async def test_blocked_prompt_ends_as_content_filter(server, gemini):
    server.script(
        stream_reply(
            [
                {
                    "promptFeedback": {"blockReason": "SAFETY"},
                    "usageMetadata": {"promptTokenCount": 6},
                }
            ]
        )
    )
    items = await run(gemini, {"messages": [USER]})
    assert (
        items[-1]["finish_reason"] == "content_filter" and items[-1]["usage"]["input_tokens"] == 6
    )


# -- failures mid-stream -----------------------------------------------------------------


async def test_error_record_mid_stream_ends_with_one_typed_error(server, gemini):
    records = reply_records(text=["Par", "tial", "ly"])
    error = error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
    server.script(stream_reply([*records[:2], error]))
    items, err = await run_until_error(gemini, {"messages": [USER]})
    assert texts(items) == ["Par", "tial"]
    assert (
        isinstance(err, ProviderUnavailableError)
        and "overloaded" in err.details["provider_message"]
    )
    assert len(server.requests) == 1


async def test_malformed_record_is_a_protocol_error(server, gemini):
    server.script(stream_reply([reply_records(text=["ok"])[0], b'data: {"candidates": [\r\n\r\n']))
    _, err = await run_until_error(gemini, {"messages": [USER]})
    assert isinstance(err, ProviderProtocolError) and "not JSON" in err.message


async def test_reset_after_the_first_byte_is_an_interrupted_stream(server, gemini):
    server.script(stream_reply([*reply_records(text=["one", "two", "three"])[:2], Reset()]))
    items, err = await run_until_error(gemini, {"messages": [USER]})
    assert isinstance(err, StreamInterruptedError) and texts(items) == ["one", "two"]
    assert len(server.requests) == 1


async def test_end_of_stream_without_a_finish_reason_is_an_interrupted_stream(server, gemini):
    server.script(stream_reply(reply_records(text=["one", "two"])[:2]))
    items, err = await run_until_error(gemini, {"messages": [USER]})
    assert texts(items) == ["one", "two"]
    assert isinstance(err, StreamInterruptedError) and "finishReason" in err.message


@pytest.mark.parametrize("before_first_byte", [True, False])
async def test_a_stall_hits_the_read_timeout(server, gemini, before_first_byte):
    records = reply_records(text=["slow", "er"])
    body = [Pause(2.0), *records] if before_first_byte else [records[0], Pause(2.0), *records[1:]]
    server.script(stream_reply(body))
    items, err = await run_until_error(gemini, {"messages": [USER]})
    assert isinstance(err, ProviderTimeoutError) and "0.5s" in err.message
    assert texts(items) == ([] if before_first_byte else ["slow"])


async def test_abandoning_a_stream_closes_its_connection(server, gemini):
    rt, name = gemini
    server.script(stream_reply(reply_records(text=[f"w{i} " for i in range(200)]), delay=0.01))
    stream = rt.call_iter_method(name, "infer", {"messages": [USER]})
    await stream.__anext__()
    await stream.aclose()
    await server.wait_disconnected(0)


# -- the fault matrix before the first byte ----------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [
        error_reply(429, rate_limited("0.01s")),
        Reply.json(
            error_body(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted"),
            status=429,
            headers={"retry-after": "0"},
        ),
        error_reply(500, error_body(500, "INTERNAL", "An internal error has occurred.")),
        error_reply(
            503, error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
        ),
        Reply.reset(),
    ],
    ids=["429-retryDelay", "429-retry-after", "500", "503", "reset-before-first-byte"],
)
async def test_retryable_failures_are_retried(server, gemini, failure):
    server.script(failure, stream_reply(reply_records(text=["Recovered."])))
    items = await run(gemini, {"messages": [USER]})
    assert fold(items).message().text == "Recovered."
    assert len(server.requests) == 2 and server.requests[0].body == server.requests[1].body


async def test_retry_delay_from_the_body_is_honoured(server, gemini):
    server.script(error_reply(429, rate_limited("0.8s")), stream_reply(reply_records(text=["ok"])))
    start = time.monotonic()
    await run(gemini, {"messages": [USER]})
    assert time.monotonic() - start >= 0.8  # the policy's own first backoff is at most 0.5s
    assert len(server.requests) == 2


async def test_retries_are_bounded_and_end_with_the_typed_error(server, gemini):
    server.script(*[error_reply(429, rate_limited("0s"))] * 3)
    _, err = await run_until_error(gemini, {"messages": [USER]})
    assert isinstance(err, RateLimitError) and not isinstance(err, QuotaExceededError)
    assert err.details["attempts"] == 3 and "exceeded your current quota" in err.message


@pytest.mark.parametrize(
    ("reply", "cls", "words"),
    [
        (
            error_reply(429, rate_limited("30s", daily=True)),
            QuotaExceededError,
            "exceeded your current quota",
        ),
        (
            error_reply(
                400,
                error_body(
                    400,
                    "INVALID_ARGUMENT",
                    "API key not valid. Please pass a valid API key.",
                    [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "API_KEY_INVALID",
                        }
                    ],
                ),
            ),
            ProviderBadRequestError,
            "API key not valid",
        ),
        (
            error_reply(
                401,
                error_body(
                    401, "UNAUTHENTICATED", "Request had invalid authentication credentials."
                ),
            ),
            AuthenticationError,
            "invalid authentication",
        ),
        (
            error_reply(
                403,
                error_body(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers."),
            ),
            PermissionDeniedError,
            "unregistered callers",
        ),
        (
            error_reply(
                400,
                error_body(
                    400, "FAILED_PRECONDITION", "User location is not supported for the API use."
                ),
            ),
            ProviderBadRequestError,
            "User location",
        ),
    ],
    ids=["daily-quota-429", "400-bad-key", "401", "403", "400"],
)
async def test_terminal_failures_are_not_retried(server, gemini, reply, cls, words):
    server.script(reply)  # a retry would find no scripted reply: the server check fails the test
    _, err = await run_until_error(gemini, {"messages": [USER]})
    assert isinstance(err, cls) and words in err.message
    assert len(server.requests) == 1


async def test_a_retired_model_reaches_the_user_as_the_providers_error(server):
    async with AsyncRuntime() as rt:
        await rt.define(
            "gemini_language_model",
            "old",
            {
                "model": "gemini-1.5-flash",
                "api_key": "AIza-retired-test",
                "base_url": server.url + "/v1beta",
            },
        )
        server.script(error_reply(404, error_body(404, "NOT_FOUND", RETIRED)))
        with pytest.raises(ModelNotFoundError) as info:
            async for _ in rt.call_iter_method("old", "infer", {"messages": [USER]}):
                pass
    assert RETIRED in info.value.message and info.value.details["provider_message"] == RETIRED
    assert info.value.details["status"] == 404 and info.value.details["code"] == "NOT_FOUND"


# -- keys --------------------------------------------------------------------------------


async def test_missing_key_fails_at_define_naming_the_variables(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    async with AsyncRuntime() as rt:
        with pytest.raises(MissingAPIKeyError) as info:
            await rt.define("gemini_language_model", "g", {"model": "gemini-2.5-flash"})
    assert "GEMINI_API_KEY" in info.value.message and "GOOGLE_API_KEY" in info.value.message


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"GOOGLE_API_KEY": "AIza-google"}, "AIza-google"),
        ({"GEMINI_API_KEY": "AIza-gemini", "GOOGLE_API_KEY": "AIza-google"}, "AIza-gemini"),
    ],
)
async def test_key_from_the_environment(server, monkeypatch, env, expected):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    server.script(stream_reply(reply_records(text=["ok"])))
    async with AsyncRuntime() as rt:
        await rt.define(
            "gemini_language_model",
            "g",
            {"model": "gemini-2.5-pro", "base_url": server.url + "/v1beta"},
        )
        async for _ in rt.call_iter_method("g", "infer", {"messages": [USER]}):
            pass
    assert server.requests[0].headers["x-goog-api-key"] == expected


async def test_the_key_never_reaches_urls_errors_reprs_or_logs(server, gemini, api_key, capsys):
    rt, name = gemini
    configure_logging(debug=True)
    try:
        server.script(
            error_reply(503, error_body(503, "UNAVAILABLE", f"overloaded for key {api_key}")),
            error_reply(400, error_body(400, "INVALID_ARGUMENT", f"API key not valid: {api_key}")),
        )
        _, err = await run_until_error(gemini, {"messages": [USER]})
    finally:
        configure_logging(debug=False)
    logs = capsys.readouterr().err
    assert "retrying" in logs  # the debug log did run
    component = rt.kernel.component(name)
    for text in (
        err.message,
        json.dumps(err.to_dict()),
        repr(err),
        repr(component),
        repr(component.client),
        component.url,
        logs,
        *(r.path + json.dumps(r.query) for r in server.requests),
    ):
        assert api_key not in text


# -- raw framing -------------------------------------------------------------------------


async def test_lf_framing_is_read_too(server, gemini):
    raw = b"".join(sse(r) for r in reply_records(text=["x", "y"]))
    server.script(Reply.sse([raw]))
    items = await run(gemini, {"messages": [USER]})
    assert fold(items).message().text == "xy"


def test_sync_runtime_through_api_model(api_key):
    from ferrule import APIModel, Runtime
    from ferrule_gemini.testing import validator
    from ferrule_kit.testing.loopback import LoopbackServer

    with LoopbackServer(validate=validator) as server, Runtime() as rt:
        server.script(stream_reply(reply_records(text=["Ahoy", "!"])))
        route = APIModel(
            "gemini-2.0-flash", api_key=api_key, base_url=server.url + "/v1beta"
        ).route(rt.kernel)
        rt.define(route.component_type, "gemini", route.attributes)
        items = list(rt.call_iter_method("gemini", "infer", {"messages": [USER]}))
        rt.delete("gemini")
    assert fold(items).message().text == "Ahoy!"
    assert server.requests[0].path == "/v1beta/models/gemini-2.0-flash:streamGenerateContent"


# -- the endpoint from the environment ------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "suffix"),
    [("GOOGLE_GEMINI_BASE_URL", ""), ("GEMINI_BASE_URL", "/"), ("GEMINI_BASE_URL", "/v1beta")],
)
async def test_the_sdk_variable_moves_the_endpoint_adding_the_api_version(
    server, monkeypatch, variable, suffix
):
    # google-genai reads GOOGLE_GEMINI_BASE_URL, a host without the API version.
    for name in ("GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, server.url + suffix)
    server.script(stream_reply(reply_records(text=["Hi there"])))
    async with AsyncRuntime() as rt:
        await rt.define("gemini_language_model", "g", {"model": "gemini-2.5-flash", "api_key": "k"})
        items = [i async for i in rt.call_iter_method("g", "infer", {"messages": [USER]})]
    assert fold(items).message().text == "Hi there"
    assert [r.path for r in server.requests] == [
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    ]
