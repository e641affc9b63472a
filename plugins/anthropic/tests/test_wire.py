"""Anthropic wire translation on its own: request bodies and stream events, no network."""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any

import pytest
from ferrule_anthropic import replies, wire
from ferrule_anthropic.testing import message_events, request_problems
from ferrule_kit.content.messages import Message, ReasoningPart, TextPart, ToolCall, converter
from ferrule_kit.content.parts import registry
from ferrule_kit.errors import (
    InvalidInputError,
    ModelError,
    ProviderProtocolError,
    ProviderUnavailableError,
    QuotaExceededError,
    UnsupportedContentError,
)
from ferrule_kit.models.lm import InferInput, MessageAccumulator, parse_infer_input
from ferrule_kit.testing.strategies import cut, texts, tool_calls
from hypothesis import given
from hypothesis import strategies as st

HEADERS = {**wire.request_headers("sk-ant-test"), "content-type": "application/json"}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 32).decode()
MODEL = "claude-sonnet-4-20250514"


# Image and audio parts as ferrule-image and ferrule-audio (installed by the test extra, not
# imported: plugins never import each other) read them from the wire.
def image_part(url: str) -> Any:
    return registry.structure({"type": "image_url", "image_url": {"url": url}})


def audio_part(data: str, format: str) -> Any:
    return registry.structure(
        {"type": "input_audio", "input_audio": {"data": data, "format": format}}
    )


def body_for(data: dict, **kw) -> dict:
    body = wire.build_request(parse_infer_input(data), model=MODEL, **kw)
    assert request_problems(json.loads(json.dumps(body)), HEADERS) == []
    return body


def feed_all(events: list[tuple[str, dict]]) -> tuple[list[dict], MessageAccumulator]:
    translator = replies.StreamTranslator()
    items, acc = [], MessageAccumulator()
    for name, data in events:
        for item in translator.feed(name, {"type": name, **data}):
            items.append(item)
            acc.add(item)
    translator.check_complete()
    return items, acc


def start(input_tokens=10, output_tokens=1, **usage):
    return (
        "message_start",
        {
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": MODEL,
                "stop_reason": None,
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **usage},
            }
        },
    )


def stop(reason="end_turn", output_tokens=5):
    return [
        (
            "message_delta",
            {
                "delta": {"stop_reason": reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        ),
        ("message_stop", {}),
    ]


# -- requests --------------------------------------------------------------------------


def test_system_multi_turn_and_options():
    body = body_for(
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello!"},
                {"role": "user", "content": [{"type": "text", "text": "Bye"}]},
            ],
            "temperature": 0.3,
            "top_p": 0.9,
            "stop": ["END"],
            "max_tokens": 77,
        }
    )
    assert body["system"] == "Be brief."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [{"type": "text", "text": "Hello!"}]
    assert (body["temperature"], body["top_p"], body["stop_sequences"], body["max_tokens"]) == (
        0.3,
        0.9,
        ["END"],
        77,
    )
    assert body["stream"] is True and "thinking" not in body


def test_default_max_tokens_is_the_component_cap():
    assert (
        body_for({"messages": [{"role": "user", "content": "x"}]})["max_tokens"]
        == wire.DEFAULT_MAX_TOKENS
    )
    assert (
        body_for({"messages": [{"role": "user", "content": "x"}]}, max_tokens=999)["max_tokens"]
        == 999
    )


def test_tools_and_parallel_tool_results_in_one_user_turn():
    body = body_for(
        {
            "messages": [
                {"role": "user", "content": "Weather in Oslo and Rome?"},
                {
                    "role": "assistant",
                    "content": [],
                    "tool_calls": [
                        {
                            "id": "toolu_1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                        },
                        {
                            "id": "toolu_2",
                            "type": "function",
                            "function": {"name": "weather", "arguments": {"city": "Rome"}},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "toolu_1", "content": "3°C"},
                {
                    "role": "tool",
                    "tool_call_id": "toolu_2",
                    "content": [{"type": "text", "text": "20°C"}],
                },
                {"role": "user", "content": "Thanks; and Paris?"},
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "weather",
                        "description": "Weather now",
                        "parameters": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                        },
                    },
                }
            ],
        }
    )
    assert body["tools"] == [
        {
            "name": "weather",
            "description": "Weather now",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    assistant, answers = body["messages"][1], body["messages"][2]
    assert assistant["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
        {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {"city": "Rome"}},
    ]
    assert answers["role"] == "user" and len(body["messages"]) == 3
    assert answers["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3°C"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "20°C"},
        {"type": "text", "text": "Thanks; and Paris?"},
    ]


def test_tool_message_without_id_is_refused_naming_the_field():
    # (refused by the kit's Message itself, before the request is built)
    with pytest.raises(InvalidInputError) as info:
        body_for({"messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "r"}]})
    assert info.value.errors[0]["path"] == "$.messages[1].tool_call_id"


def test_reasoning_effort_sets_the_thinking_budget():
    for effort, budget in wire.THINKING_BUDGETS.items():
        body = body_for({"messages": [{"role": "user", "content": "x"}], "reasoning": effort})
        assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
        assert body["max_tokens"] > budget
    capped = body_for(
        {"messages": [{"role": "user", "content": "x"}], "reasoning": True, "max_tokens": 3000}
    )
    assert capped["thinking"]["budget_tokens"] < capped["max_tokens"] == 3000
    roomy = body_for(
        {"messages": [{"role": "user", "content": "x"}], "reasoning": True}, max_tokens=64000
    )
    assert roomy["max_tokens"] == 64000 and roomy["thinking"]["budget_tokens"] == 8192


def test_reasoning_refuses_what_thinking_cannot_take():
    with pytest.raises(InvalidInputError) as info:
        body_for(
            {"messages": [{"role": "user", "content": "x"}], "reasoning": True, "max_tokens": 1000}
        )
    assert info.value.errors[0]["path"] == "$.max_tokens"
    with pytest.raises(InvalidInputError) as info:
        body_for(
            {"messages": [{"role": "user", "content": "x"}], "reasoning": True, "temperature": 0.5}
        )
    assert info.value.errors[0]["path"] == "$.temperature"
    with pytest.raises(InvalidInputError) as info:
        body_for({"messages": [{"role": "user", "content": "x"}], "reasoning": True, "top_p": 0.5})
    assert info.value.errors[0]["path"] == "$.top_p"
    body_for({"messages": [{"role": "user", "content": "x"}], "reasoning": True, "top_p": 0.96})
    with pytest.raises(InvalidInputError) as info:
        body_for({"messages": [{"role": "user", "content": "x"}], "temperature": 1.5})
    assert "0 to 1" in info.value.message


@pytest.mark.parametrize(
    ("model", "adaptive"),
    [
        ("claude-opus-4-7", True),
        ("claude-sonnet-5", True),
        ("claude-opus-4-8-20270101", True),
        ("claude-sonnet-4-6", False),
        ("claude-sonnet-4-20250514", False),
        ("claude-opus-4-20250514", False),
        ("claude-3-7-sonnet-20250219", False),
        ("claude-haiku-4-5-20251001", False),
    ],
)
def test_newer_models_get_adaptive_thinking(model, adaptive):
    inputs = parse_infer_input(
        {"messages": [{"role": "user", "content": "x"}], "reasoning": "high"}
    )
    body = wire.build_request(inputs, model=model)
    assert request_problems(body, HEADERS) == []
    if adaptive:
        assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {
            "effort": "high"
        }
    else:
        assert body["thinking"]["type"] == "enabled" and "output_config" not in body


def test_output_schema_goes_to_output_config_format():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    body = body_for({"messages": [{"role": "user", "content": "x"}], "output_schema": schema})
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": schema}}


def test_prompt_cache_and_speed_go_as_top_level_cache_control_and_speed():
    request = {"messages": [{"role": "user", "content": "x"}]}
    body = body_for({**request, "prompt_cache": {"ttl": "1h"}, "speed": "fast"})
    assert body["cache_control"] == {"type": "ephemeral", "ttl": "1h"}  # automatic caching
    assert body["speed"] == "fast"
    assert body_for({**request, "prompt_cache": {}})["cache_control"]["ttl"] == "5m"
    plain = body_for(request)
    assert "cache_control" not in plain and "speed" not in plain
    counted = wire.build_count_request(
        parse_infer_input({**request, "prompt_cache": {}, "speed": "standard"}), model=MODEL
    )
    assert (counted["cache_control"], counted["speed"]) == (
        {"type": "ephemeral", "ttl": "5m"},
        "standard",
    )
    assert request_problems(counted, HEADERS, counting=True) == []
    with pytest.raises(InvalidInputError) as error:
        parse_infer_input({**request, "prompt_cache": {"ttl": "2h"}})
    assert error.value.errors[0]["path"] == "$.prompt_cache.ttl"


def test_tool_choice_in_anthropics_shape():
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    request = {"messages": [{"role": "user", "content": "x"}], "tools": tools}
    named = {"type": "function", "function": {"name": "get_weather"}}
    assert body_for({**request, "tool_choice": "required"})["tool_choice"] == {"type": "any"}
    assert body_for({**request, "tool_choice": named})["tool_choice"] == {
        "type": "tool",
        "name": "get_weather",
    }
    assert "tool_choice" not in body_for(request)
    with pytest.raises(InvalidInputError, match="while the model thinks") as error:
        body_for({**request, "tool_choice": "required", "reasoning": True})
    assert error.value.errors[0]["path"] == "$.tool_choice"


def test_thinking_blocks_round_trip_unchanged_first_in_the_assistant_turn():
    history = Message(
        "assistant",
        "",
        reasoning=[
            ReasoningPart("Let me check the weather.", "sig-A"),
            ReasoningPart("", wire.REDACTED_PREFIX + "opaque=="),
            ReasoningPart("from a local model, unsigned"),
            ReasoningPart("from Gemini", "functionCall.0:c2lnbmF0dXJl"),
        ],
        tool_calls=[ToolCall("toolu_9", "weather", {"city": "Oslo"})],
    )
    inputs = InferInput(
        messages=[
            Message("user", "Weather?"),
            history,
            Message("tool", "3°C", tool_call_id="toolu_9"),
        ],
        reasoning=True,
    )
    body = wire.build_request(inputs, model=MODEL)
    assert request_problems(body, HEADERS) == []
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "Let me check the weather.", "signature": "sig-A"},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "tool_use", "id": "toolu_9", "name": "weather", "input": {"city": "Oslo"}},
    ]


def test_thinking_is_not_switched_on_in_the_middle_of_a_tool_loop():
    call = ToolCall("toolu_1", "weather", {"city": "Oslo"})
    loop = [Message("user", "Weather?"), Message("assistant", "", tool_calls=[call])]
    loop.append(Message("tool", "3°C", tool_call_id="toolu_1"))
    body = wire.build_request(InferInput(messages=loop, reasoning=True), model=MODEL)
    assert request_problems(body, HEADERS) == [] and "thinking" not in body
    # a new user turn starts a new assistant turn, which may think
    later = InferInput(
        messages=[*loop, Message("assistant", "3°C."), Message("user", "And Rome?")], reasoning=True
    )
    assert wire.build_request(later, model=MODEL)["thinking"]["type"] == "enabled"


def test_base64_and_url_images_are_sent_and_audio_is_refused():
    body = body_for(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                    ],
                }
            ]
        }
    )
    assert body["messages"][0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    }
    url = InferInput(messages=[Message("user", [image_part("https://example.com/a.png")])])
    assert wire.build_request(url, model=MODEL)["messages"][0]["content"][0] == {
        "type": "image",
        "source": {"type": "url", "url": "https://example.com/a.png"},
    }
    audio = InferInput(
        messages=[Message("user", [TextPart("hear this"), audio_part("AAAA", "wav")])]
    )
    with pytest.raises(UnsupportedContentError) as info:
        wire.build_request(audio, model=MODEL)
    assert info.value.details["content_type"] == "audio" and "Gemini" in info.value.message


def test_encode_part_gives_content_blocks():
    # an image by ferrule-image's Anthropic encoder, once CONTENT lets it in
    assert wire.encode_part(image_part("data:image/png;base64,iVBORw0KGgo=")) == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert wire.encode_part(TextPart("hi")) == {"type": "text", "text": "hi"}
    with pytest.raises(UnsupportedContentError):
        wire.encode_part(audio_part("AAAA", "wav"))


def test_image_type_and_size_are_checked_before_sending():
    tiff = InferInput(messages=[Message("user", [image_part(f"data:image/tiff;base64,{PNG}")])])
    with pytest.raises(UnsupportedContentError, match="image/tiff"):
        wire.build_request(tiff, model=MODEL)
    big = base64.b64encode(b"\0" * (wire.MAX_IMAGE_BYTES + 3)).decode()
    with pytest.raises(UnsupportedContentError, match="5 MB"):
        wire.build_request(
            InferInput(messages=[Message("user", [image_part(f"data:image/png;base64,{big}")])]),
            model=MODEL,
        )
    fits = base64.b64encode(b"\0" * wire.MAX_IMAGE_BYTES).decode()
    wire.build_request(
        InferInput(messages=[Message("user", [image_part(f"data:image/png;base64,{fits}")])]),
        model=MODEL,
    )


def test_only_a_system_prompt_is_refused():
    with pytest.raises(InvalidInputError, match="user message"):
        wire.build_request(InferInput(messages=[Message("system", "x")]), model=MODEL)


# -- the request validator catches what the API refuses ---------------------------------


def test_validator_catches_malformed_requests():
    good = body_for({"messages": [{"role": "user", "content": "x"}]})
    assert request_problems(good, {"x-api-key": "k", "content-type": "application/json"}) == [
        "header anthropic-version: must be 2023-06-01"
    ]
    cases = [
        ({**good, "max_tokens": None}, "max_tokens"),
        ({**good, "system_prompt": "x"}, "unknown field"),
        ({**good, "messages": [{"role": "system", "content": "x"}]}, "messages[0].role"),
        (
            {**good, "messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]},
            "non-empty",
        ),
        (
            {
                **good,
                "messages": [
                    {"role": "user", "content": "x"},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                    },
                    {"role": "user", "content": "no result"},
                ],
            },
            "without tool_result",
        ),
        ({**good, "thinking": {"type": "enabled", "budget_tokens": 4096}}, "greater than"),
        (
            {**good, "thinking": {"type": "enabled", "budget_tokens": 100}, "max_tokens": 5000},
            ">= 1024",
        ),
        (
            {**good, "tools": [{"name": "bad name", "input_schema": {"type": "object"}}]},
            "tools[0].name",
        ),
        (
            {
                **good,
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": "not base64!",
                                },
                            }
                        ],
                    }
                ],
            },
            "base64",
        ),
    ]
    # the top-level keys of anthropic 2.14's create(), as Anthropic documents them
    cases += [
        ({**good, "cache_control": {"type": "persistent"}}, "cache_control.type"),
        ({**good, "cache_control": {"type": "ephemeral", "ttl": "2h"}}, "cache_control.ttl"),
        ({**good, "cache_control": {"type": "ephemeral", "scope": "x"}}, "cache_control.scope"),
        ({**good, "speed": "ludicrous"}, "speed"),
        ({**good, "diagnostics": {"previous_message_id": 5}}, "diagnostics.previous_message_id"),
        ({**good, "diagnostics": {"since": "msg_1"}}, "diagnostics: an object"),
    ]
    for body, fragment in cases:
        problems = request_problems(body, HEADERS)
        assert any(fragment in p for p in problems), (fragment, problems)
    documented = {
        "cache_control": {"type": "ephemeral", "ttl": "1h"},
        "speed": "fast",
        "diagnostics": {"previous_message_id": None},
    }
    assert request_problems({**good, **documented}, HEADERS) == []
    assert request_problems({**good, "cache_control": None, "speed": None}, HEADERS) == []


# -- the stream ------------------------------------------------------------------------


def test_named_events_become_text_reasoning_and_tool_call_items():
    events = [
        start(input_tokens=25, cache_read_input_tokens=5),
        ("ping", {}),
        (
            "content_block_start",
            {"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        ),
        (
            "content_block_delta",
            {"index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me check"}},
        ),
        ("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "…"}}),
        (
            "content_block_delta",
            {"index": 0, "delta": {"type": "signature_delta", "signature": "EqQB"}},
        ),
        ("content_block_stop", {"index": 0}),
        (
            "content_block_start",
            {"index": 1, "content_block": {"type": "redacted_thinking", "data": "xyz"}},
        ),
        ("content_block_stop", {"index": 1}),
        ("content_block_start", {"index": 2, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 2, "delta": {"type": "text_delta", "text": "Checking "}}),
        ("content_block_delta", {"index": 2, "delta": {"type": "citations_delta", "citation": {}}}),
        ("content_block_delta", {"index": 2, "delta": {"type": "text_delta", "text": "both."}}),
        ("content_block_stop", {"index": 2}),
        (
            "content_block_start",
            {
                "index": 3,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_A",
                    "name": "weather",
                    "input": {},
                },
            },
        ),
        (
            "content_block_delta",
            {"index": 3, "delta": {"type": "input_json_delta", "partial_json": ""}},
        ),
        (
            "content_block_delta",
            {"index": 3, "delta": {"type": "input_json_delta", "partial_json": '{"city": "Os'}},
        ),
        (
            "content_block_delta",
            {"index": 3, "delta": {"type": "input_json_delta", "partial_json": 'lo"}'}},
        ),
        ("content_block_stop", {"index": 3}),
        (
            "content_block_start",
            {
                "index": 4,
                "content_block": {"type": "tool_use", "id": "toolu_B", "name": "time", "input": {}},
            },
        ),
        ("content_block_stop", {"index": 4}),
        ("some_future_event", {"x": 1}),
        *stop("tool_use", output_tokens=89),
    ]
    items, acc = feed_all(events)
    assert [i["finish_reason"] for i in items][-1] == "tool_calls"
    assert sum(1 for i in items if i["finish_reason"]) == 1 and "usage" in items[-1]
    assert items[-1]["usage"] == {"input_tokens": 30, "output_tokens": 89}
    message = acc.message()
    assert message.text == "Checking both."
    assert message.reasoning == [
        ReasoningPart("Let me check…", "EqQB"),
        ReasoningPart("", wire.REDACTED_PREFIX + "xyz"),
    ]
    assert message.tool_calls == [
        ToolCall("toolu_A", "weather", {"city": "Oslo"}),
        ToolCall("toolu_B", "time", {}),
    ]
    tool_items = [i["message"]["tool_calls"][0] for i in items if "tool_calls" in i["message"]]
    assert tool_items[0] == {
        "index": 0,
        "id": "toolu_A",
        "type": "function",
        "function": {"name": "weather", "arguments": ""},
    }
    assert [t["index"] for t in tool_items] == [0, 0, 0, 1]


def test_cumulative_usage_is_not_double_counted():
    events = [start(input_tokens=12, output_tokens=3)]
    events.append(
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
    )
    for n in (5, 9, 14):  # each message_delta repeats the running total
        events.append(
            ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "a"}})
        )
        events.append(
            ("message_delta", {"delta": {"stop_reason": None}, "usage": {"output_tokens": n}})
        )
    events += stop("max_tokens", output_tokens=20)
    items, _ = feed_all(events)
    assert items[-1]["finish_reason"] == "length"
    assert items[-1]["usage"] == {"input_tokens": 12, "output_tokens": 20}


@pytest.mark.parametrize(
    ("reason", "ours"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("brand_new_reason", "stop"),
    ],
)
def test_stop_reasons_map(reason, ours):
    items, _ = feed_all([start(), *stop(reason)])
    assert items[-1]["finish_reason"] == ours


def test_the_matched_stop_sequence_is_reported():
    """Anthropic names the stop string that ended the reply; the last item carries it (the
    LM contract's ``stop_sequence``), and nothing when the reply ended otherwise."""
    matched = message_events(text=["Count: 1, 2, "], stop_reason="stop_sequence", stop_sequence="3")
    items, _ = feed_all(matched)
    assert (items[-1]["finish_reason"], items[-1]["stop_sequence"]) == ("stop", "3")
    items, _ = feed_all(message_events(text=["Done."]))
    assert items[-1]["finish_reason"] == "stop" and "stop_sequence" not in items[-1]


def test_error_event_mid_stream_raises_one_typed_error():
    translator = replies.StreamTranslator()
    translator.feed("message_start", start()[1])
    with pytest.raises(ModelError) as info:
        translator.feed(
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
    assert isinstance(info.value, ProviderUnavailableError)
    assert info.value.details["type"] == "overloaded_error" and info.value.details["mid_stream"]
    assert "Overloaded" in info.value.message and info.value.details["provider"] == "anthropic"
    with pytest.raises(QuotaExceededError):
        translator.feed(
            "error", {"type": "error", "error": {"type": "billing_error", "message": "Add credits"}}
        )


def test_truncated_and_malformed_streams_raise_typed_errors():
    translator = replies.StreamTranslator()
    translator.feed("message_start", start()[1])
    with pytest.raises(ModelError, match="before message_stop"):
        translator.check_complete()
    with pytest.raises(ModelError, match="malformed"):
        translator.feed("content_block_delta", {"type": "content_block_delta", "index": 0})
    with pytest.raises(ModelError, match="malformed"):
        translator.feed("message_start", ["not", "an", "object"])
    translator.feed(
        "content_block_start",
        {
            "index": 3,
            "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"},
        },
    )
    assert (
        translator.feed(
            "content_block_delta",
            {"index": 3, "delta": {"type": "input_json_delta", "partial_json": '{"q'}},
        )
        == []
    )
    with pytest.raises(ModelError, match="never started"):
        translator.feed(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 7,
                "delta": {"type": "input_json_delta", "partial_json": "{"},
            },
        )


# -- properties ------------------------------------------------------------------------


@given(
    thinking=st.lists(texts, max_size=3),
    signature=st.text(alphabet="ABCDEFabcdef0123456789+/=", min_size=1, max_size=30),
    answer=st.lists(texts, max_size=4),
    tool_calls=tool_calls,
    cuts=st.lists(st.integers(0, 200), max_size=6),
    output_counts=st.lists(st.integers(0, 10_000), min_size=1, max_size=5),
)
def test_any_stream_folds_back_into_the_message_and_round_trips(
    thinking, signature, answer, tool_calls, cuts, output_counts
):
    running = sum(output_counts)
    events = message_events(
        text=answer,
        reasoning=thinking,
        signature=signature,
        tool_calls=[(f"toolu_{n}", name, args) for n, (name, args) in enumerate(tool_calls)],
        input_tokens=7,
        output_tokens=running,
        split_json=lambda arguments: cut(arguments, cuts),
    )
    # cumulative usage arrives in several message_delta events before the final one
    counts = list(itertools.accumulate(output_counts))
    events[-2:-2] = [
        ("message_delta", {"delta": {"stop_reason": None}, "usage": {"output_tokens": count}})
        for count in counts
    ]
    items, acc = feed_all(events)
    assert items[-1]["usage"] == {"input_tokens": 7, "output_tokens": running}
    message = acc.message()
    assert message.text == "".join(answer)
    assert [(c.name, c.arguments) for c in message.tool_calls] == tool_calls
    assert message.reasoning == ([ReasoningPart("".join(thinking), signature)] if thinking else [])
    # the next turn sends all of it back as Anthropic produced it
    follow_up = [Message("tool", "ok", tool_call_id=c.id) for c in message.tool_calls] or [
        Message("user", "more")
    ]
    inputs = InferInput(
        messages=[Message("user", "go"), message, *follow_up], reasoning=bool(thinking)
    )
    body = wire.build_request(inputs, model=MODEL)
    assert request_problems(body, HEADERS) == []
    expected = []
    if thinking:
        expected.append({"type": "thinking", "thinking": "".join(thinking), "signature": signature})
    if answer:
        expected.append({"type": "text", "text": "".join(answer)})
    expected += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
        for c in message.tool_calls
    ]
    if expected:
        assert body["messages"][1] == {"role": "assistant", "content": expected}
    else:  # an empty reply is not sent back; the two user turns merge
        assert [m["role"] for m in body["messages"]] == ["user"]


@given(st.lists(st.sampled_from(["user", "assistant", "tool", "system"]), min_size=1, max_size=8))
def test_any_conversation_shape_builds_a_request_anthropic_accepts_or_a_clear_error(roles):
    messages, last_calls = [], []
    for n, role in enumerate(roles):
        if role == "assistant":
            last_calls = [ToolCall(f"toolu_{n}", "f", {"n": n})] if n % 2 else []
            messages.append(Message("assistant", f"a{n}", tool_calls=last_calls))
        elif role == "tool":
            if not last_calls:
                continue
            messages.append(Message("tool", f"r{n}", tool_call_id=last_calls.pop().id))
        else:
            messages.append(Message(role, f"{role}{n}"))
    # a conversation the user could legitimately send: every call answered
    messages = [
        m
        for m in messages
        if m.role != "tool"
        or any(
            c.id == m.tool_call_id for p in messages if p.role == "assistant" for c in p.tool_calls
        )
    ]
    if not messages:
        return
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    messages = [
        m
        if m.role != "assistant"
        else Message(
            "assistant", m.contents, tool_calls=[c for c in m.tool_calls if c.id in answered]
        )
        for m in messages
    ]
    try:
        body = wire.build_request(InferInput(messages=messages), model=MODEL)
    except InvalidInputError as exc:
        assert all(m.role == "system" for m in messages), exc
        return
    assert request_problems(body, HEADERS) == []


# -- system blocks with their own cache marks, and the trailing user turn -----------------


SYSTEM_TWO = {
    "messages": [
        {"role": "system", "content": "You are an architect."},
        {"role": "system", "content": "Server time: 12:00."},
        {"role": "user", "content": "x"},
    ]
}


def test_system_cache_sends_the_system_as_marked_blocks():
    body = body_for({**SYSTEM_TWO, "system_cache": [{"ttl": "1h"}, None]})
    assert body["system"] == [
        {
            "type": "text",
            "text": "You are an architect.",
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
        },
        {"type": "text", "text": "Server time: 12:00."},
    ]
    # Fewer marks than system messages: the rest unmarked; none at all: one string, as ever.
    assert body_for({**SYSTEM_TWO, "system_cache": [None, {}]})["system"][1]["cache_control"] == {
        "type": "ephemeral",
        "ttl": "5m",
    }
    assert body_for(SYSTEM_TWO)["system"] == "You are an architect.\n\nServer time: 12:00."


def test_system_cache_is_refused_where_anthropic_would_refuse_it():
    with pytest.raises(InvalidInputError) as error:
        wire.build_request(
            parse_infer_input({**SYSTEM_TWO, "system_cache": [{"ttl": "5m"}, {"ttl": "1h"}]}),
            model=MODEL,
        )
    assert error.value.errors[0]["path"] == "$.system_cache"
    assert "1h" in str(error.value)
    five = [{"role": "system", "content": f"part {i}"} for i in range(5)]
    with pytest.raises(InvalidInputError) as error:
        wire.build_request(
            parse_infer_input(
                {"messages": [*five, {"role": "user", "content": "x"}], "system_cache": [{}] * 5}
            ),
            model=MODEL,
        )
    assert error.value.errors[0]["path"] == "$.system_cache"
    with pytest.raises(InvalidInputError) as error:  # a mark for a message that is not there
        parse_infer_input({**SYSTEM_TWO, "system_cache": [None, None, {}]})
    assert error.value.errors[0]["path"] == "$.system_cache"


def test_the_loopback_refuses_what_anthropic_refuses_of_cache_marks():
    request = {"model": MODEL, "max_tokens": 5, "stream": True}
    user = [{"role": "user", "content": "x"}]
    late = [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
    ]
    assert request_problems({**request, "system": late, "messages": user}, HEADERS)
    many = [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}] * 5
    assert request_problems({**request, "system": many, "messages": user}, HEADERS)
    empty = [{"type": "text", "text": ""}]
    assert request_problems({**request, "system": empty, "messages": user}, HEADERS)


TO_CONTINUE = {
    "messages": [
        {"role": "user", "content": "What is 15 + 27?"},
        {"role": "assistant", "content": "Let me think."},
    ]
}


def test_trailing_user_message_follows_a_conversation_ending_with_the_model():
    body = body_for(TO_CONTINUE, trailing_user_message="continue")
    assert body["messages"][-2:] == [
        {"role": "assistant", "content": [{"type": "text", "text": "Let me think."}]},
        {"role": "user", "content": [{"type": "text", "text": "continue"}]},
    ]
    # Ending with the user: nothing added; without the setting: the conversation as it is.
    ends_with_user = {"messages": TO_CONTINUE["messages"][:1]}
    assert len(body_for(ends_with_user, trailing_user_message=".")["messages"]) == 1
    assert body_for(TO_CONTINUE)["messages"][-1]["role"] == "assistant"
    counted = wire.build_count_request(
        parse_infer_input(TO_CONTINUE), model=MODEL, trailing_user_message="."
    )
    assert counted["messages"][-1]["content"] == [{"type": "text", "text": "."}]


def test_the_loopback_refuses_a_prefill_where_the_model_does():
    body = wire.build_request(parse_infer_input(TO_CONTINUE), model="claude-sonnet-4-6")
    assert request_problems(body, HEADERS) == [
        "messages: this model does not support assistant message prefill"
    ]
    fixed = wire.build_request(
        parse_infer_input(TO_CONTINUE), model="claude-sonnet-4-6", trailing_user_message="go on"
    )
    assert request_problems(fixed, HEADERS) == []


# -- server tools: Anthropic runs them; their blocks go back as they came ------------------

CODE_EXECUTION = {"type": "code_execution_20250825", "name": "code_execution"}
ADVISOR = {"type": "advisor_20260301", "name": "advisor", "model": "claude-opus-4-6"}
WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
RESULT = {
    "type": "code_execution_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": {"type": "code_execution_result", "stdout": "5.5\n", "stderr": "", "return_code": 0},
}


def test_server_tools_go_after_the_function_tools_as_given():
    body = body_for(
        {
            "messages": [{"role": "user", "content": "mean of 1..10?"}],
            "tools": [WEATHER_TOOL],
            "provider_tools": [CODE_EXECUTION, ADVISOR],
        }
    )
    assert [t["name"] for t in body["tools"]] == ["get_weather", "code_execution", "advisor"]
    assert body["tools"][1:] == [CODE_EXECUTION, ADVISOR]  # sent exactly as declared


def test_server_tools_are_refused_naming_the_field():
    request = {"messages": [{"role": "user", "content": "x"}]}
    with pytest.raises(InvalidInputError) as error:  # the host allows web search only
        wire.build_request(
            parse_infer_input({**request, "provider_tools": [CODE_EXECUTION]}),
            model=MODEL,
            server_tools=frozenset({"web_search"}),
        )
    assert error.value.errors[0]["path"] == "$.provider_tools[0].type"
    allowed = wire.build_request(
        parse_infer_input({**request, "provider_tools": [CODE_EXECUTION]}),
        model=MODEL,
        server_tools=frozenset({"code_execution"}),
    )
    assert allowed["tools"] == [CODE_EXECUTION]
    with pytest.raises(InvalidInputError) as error:
        wire.build_request(
            parse_infer_input({**request, "provider_tools": [{"type": "code_execution_20250825"}]}),
            model=MODEL,
        )
    assert error.value.errors[0]["path"] == "$.provider_tools[0].name"
    for bad in ({"name": "x"}, {"type": "function", "name": "x"}):
        with pytest.raises(InvalidInputError) as error:
            parse_infer_input({**request, "provider_tools": [bad]})
        assert error.value.errors[0]["path"] == "$.provider_tools[0].type"


def test_a_server_tools_work_is_kept_and_sent_back_on_the_next_turn():
    events = message_events(
        text=["The mean is 5.5."],
        server_tools=[("srvtoolu_1", "code_execution", {"code": "print(5.5)"}, RESULT)],
    )
    _, accumulator = feed_all(events)
    assert "".join(accumulator.text) == "The mean is 5.5."
    use, result = accumulator.reasoning
    assert (use.text, result.text) == ("", "")  # nothing shown as the model's reasoning
    message = accumulator.message()
    body = body_for(
        {
            "messages": [
                {"role": "user", "content": "mean of 1..10?"},
                converter.unstructure(message),
                {"role": "user", "content": "and the median?"},
            ],
            "provider_tools": [CODE_EXECUTION],
        }
    )
    assert body["messages"][1]["content"] == [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "code_execution",
            "input": {"code": "print(5.5)"},
        },
        RESULT,
        {"type": "text", "text": "The mean is 5.5."},
    ]
    assert accumulator.finish_reason == "stop" and not accumulator.calls


def test_a_server_tools_malformed_input_is_a_protocol_error():
    events = message_events(
        server_tools=[("srvtoolu_1", "code_execution", {"code": "x"}, RESULT)],
        split_json=lambda s: [s[:-1]],  # the closing brace never comes
    )
    with pytest.raises(ProviderProtocolError):
        feed_all(events)
