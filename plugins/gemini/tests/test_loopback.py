"""ferrule-gemini end to end: the installed plugin, defined in a runtime, against a loopback
server that speaks Gemini's streaming wire format and refuses malformed requests."""

from __future__ import annotations

import base64
import json
import time
from typing import ClassVar

import pytest
from ferrule import AsyncRuntime
from ferrule_gemini.testing import (
    error_body,
    error_reply,
    rate_limited,
    reply_records,
    stream_reply,
)
from ferrule_kit.errors import (
    AuthenticationError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderBadRequestError,
    ProviderUnavailableError,
    QuotaExceededError,
    RateLimitError,
    UnsupportedContentError,
)
from ferrule_kit.testing import fold, tiny_png, tiny_wav
from ferrule_kit.testing.loopback import Reply, sse
from ferrule_kit.testing.providers import USER, WEATHER, Failure, ProviderConformance, Refusal

SIG = base64.b64encode(b"\x12\x0a opaque thought signature").decode()
RETIRED = (
    "models/gemini-1.5-flash is not found for API version v1beta, or is not supported for "
    "generateContent. Call ListModels to see the list of available models and their supported methods."
)


def texts(items):
    return [i["message"]["content"][0]["text"] for i in items if i["message"]["content"][0]["text"]]


# -- the happy paths ---------------------------------------------------------------------


async def test_streamed_text_with_system_and_history(server, gemini, api_key):
    server.script(stream_reply(reply_records(text=["Hel", "lo", " there."], prompt_tokens=21)))
    items = await gemini.collect(
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
    items = await gemini.collect(first)
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
    items = await gemini.collect({**first, "messages": history})
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
    items = await gemini.collect(first)
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
    items = await gemini.collect({**first, "messages": history})
    answer = fold(items).message()
    assert server.requests[1].json["contents"][1]["parts"] == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": SIG}
    ]
    await gemini.collect(
        {**first, "messages": [*history, answer.to_dict(), {"role": "user", "content": "Thanks"}]},
    )
    assert server.requests[2].json["contents"][3]["parts"] == [
        {"text": "It is 3°C.", "thoughtSignature": SIG[::-1]}
    ]


async def test_usage_is_the_last_report_not_a_sum(server, gemini):
    server.script(
        stream_reply(reply_records(text=["a", "b", "c", "d"], reasoning=["hm"], prompt_tokens=40))
    )
    items = await gemini.collect({"messages": [USER]})
    # candidates: 2 per text record + 1 at the end; thoughts: 3 (every record repeats the totals)
    assert items[-1]["usage"] == {"input_tokens": 40, "output_tokens": 12, "reasoning_tokens": 3}


async def test_images_and_audio_go_inline(server, gemini):
    png, wav = base64.b64encode(tiny_png()).decode(), base64.b64encode(tiny_wav()).decode()
    server.script(stream_reply(reply_records(text=["A red square and silence."])))
    await gemini.collect(
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
    items = await gemini.collect({"messages": [USER]})
    assert (
        items[-1]["finish_reason"] == "content_filter" and items[-1]["usage"]["input_tokens"] == 6
    )


# -- failures mid-stream -----------------------------------------------------------------


async def test_error_record_mid_stream_ends_with_one_typed_error(server, gemini):
    records = reply_records(text=["Par", "tial", "ly"])
    error = error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
    server.script(stream_reply([*records[:2], error]))
    items, err = await gemini.collect_until_error({"messages": [USER]})
    assert texts(items) == ["Par", "tial"]
    assert (
        isinstance(err, ProviderUnavailableError)
        and "overloaded" in err.details["provider_message"]
    )
    assert len(server.requests) == 1


# -- what every provider does alike: faults, retries, keys ---------------------------------


class TestGeminiProvider(ProviderConformance):
    KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    REFUSED: ClassVar[dict[str, Refusal]] = {
        "image-url": (
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            UnsupportedContentError,
            ("Gemini", "URL"),
        ),
        "wma": (
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wma"}},
            UnsupportedContentError,
            ("Gemini", "wma"),
        ),
    }
    RETRYABLE: ClassVar[dict[str, Reply]] = {
        "429-retryDelay": error_reply(429, rate_limited("0.01s")),
        "429-retry-after": Reply.json(
            error_body(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted"),
            status=429,
            headers={"retry-after": "0"},
        ),
        "500": error_reply(500, error_body(500, "INTERNAL", "An internal error has occurred.")),
        "503": error_reply(
            503, error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
        ),
        "reset-before-first-byte": Reply.reset(),
    }
    TERMINAL: ClassVar[dict[str, Failure]] = {
        "daily-quota-429": (
            error_reply(429, rate_limited("30s", daily=True)),
            QuotaExceededError,
            "exceeded your current quota",
        ),
        "400-bad-key": (
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
        "401": (
            error_reply(
                401,
                error_body(
                    401, "UNAUTHENTICATED", "Request had invalid authentication credentials."
                ),
            ),
            AuthenticationError,
            "invalid authentication",
        ),
        "403": (
            error_reply(
                403,
                error_body(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers."),
            ),
            PermissionDeniedError,
            "unregistered callers",
        ),
        "400": (
            error_reply(
                400,
                error_body(
                    400, "FAILED_PRECONDITION", "User location is not supported for the API use."
                ),
            ),
            ProviderBadRequestError,
            "User location",
        ),
    }

    @pytest.fixture
    def provider(self, gemini):
        return gemini


async def test_retries_of_a_rate_limit_end_with_the_rate_limit(server, gemini):
    server.script(*[error_reply(429, rate_limited("0s"))] * 3)
    _, err = await gemini.collect_until_error({"messages": [USER]})
    assert isinstance(err, RateLimitError) and not isinstance(err, QuotaExceededError)
    assert err.details["attempts"] == 3 and "exceeded your current quota" in err.message


async def test_retry_delay_from_the_body_is_honoured(server, gemini):
    server.script(error_reply(429, rate_limited("0.8s")), stream_reply(reply_records(text=["ok"])))
    start = time.monotonic()
    await gemini.collect({"messages": [USER]})
    assert time.monotonic() - start >= 0.8  # the policy's own first backoff is at most 0.5s
    assert len(server.requests) == 2


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


async def test_the_key_never_goes_in_the_url(server, gemini, api_key):
    server.script(stream_reply(reply_records(text=["ok"])))
    await gemini.collect({"messages": [USER]})
    component = gemini.runtime.kernel.component(gemini.name)
    sent = server.requests[0]
    assert api_key not in component.url + sent.path + json.dumps(sent.query)
    assert sent.headers["x-goog-api-key"] == api_key


# -- raw framing -------------------------------------------------------------------------


async def test_lf_framing_is_read_too(server, gemini):
    raw = b"".join(sse(r) for r in reply_records(text=["x", "y"]))
    server.script(Reply.sse([raw]))
    items = await gemini.collect({"messages": [USER]})
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
