"""Gemini wire translation on its own: request bodies, schemas and stream records, no network."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from ferrule_gemini import wire
from ferrule_gemini.schema import MAX_REF_DEPTH, function_declaration, to_gemini_schema
from ferrule_gemini.testing import request_problems, schema_problems
from ferrule_kit.content.messages import Message, ReasoningPart, TextPart, ToolCall
from ferrule_kit.content.parts import registry
from ferrule_kit.errors import (
    InvalidInputError,
    ModelError,
    ProviderUnavailableError,
    UnsupportedContentError,
)
from ferrule_kit.models.lm import (
    FunctionDescription,
    InferInput,
    MessageAccumulator,
    parse_infer_input,
)
from ferrule_kit.testing.strategies import texts, tool_calls
from hypothesis import given
from hypothesis import strategies as st

MODEL = "gemini-2.5-flash"
PATH = f"/v1beta/models/{MODEL}:streamGenerateContent"
HEADERS = {**wire.request_headers("AIza-test"), "content-type": "application/json"}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 32).decode()
WAV = base64.b64encode(b"RIFF\0\0\0\0WAVEfmt ").decode()
SIG = base64.b64encode(b"opaque signature").decode()


# Image and audio parts as ferrule-image and ferrule-audio (installed by the test extra, not
# imported: plugins never import each other) read them from the wire.
def image_part(url: str) -> Any:
    return registry.structure({"type": "image_url", "image_url": {"url": url}})


def audio_part(data: str, format: str) -> Any:
    return registry.structure(
        {"type": "input_audio", "input_audio": {"data": data, "format": format}}
    )


def check(body: dict) -> dict:
    assert request_problems(PATH, {"alt": "sse"}, HEADERS, json.loads(json.dumps(body))) == []
    return body


def body_for(data: dict, model: str = MODEL) -> dict:
    return check(wire.build_request(parse_infer_input(data), model=model))


def ids():
    counter = iter(range(1000))
    return lambda: f"{wire.GENERATED_ID_PREFIX}{next(counter)}"


def feed_all(records: list[dict]) -> tuple[list[dict], MessageAccumulator]:
    translator = wire.StreamTranslator(new_call_id=ids())
    items, acc = [], MessageAccumulator()
    for record in records:
        items += translator.feed(json.loads(json.dumps(record)))
    items.append(translator.close())
    for item in items:
        acc.add(item)
    return items, acc


def record(*parts, finish=None, usage=None):
    candidate = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    out = {"candidates": [candidate], "modelVersion": MODEL}
    if usage:
        out["usageMetadata"] = usage
    return out


# -- requests --------------------------------------------------------------------------


def test_url_and_headers_keep_the_key_out_of_the_url():
    url = wire.stream_url(None, "gemini-2.5-pro")
    assert (
        url
        == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    )
    assert wire.stream_url("http://127.0.0.1:9/v1beta/", "models/gemini-x") == (
        "http://127.0.0.1:9/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    )
    assert HEADERS["x-goog-api-key"] == "AIza-test" and "AIza" not in url


def test_system_multi_turn_and_generation_config():
    body = body_for(
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello!"},
                {"role": "user", "content": "Bye"},
            ],
            "temperature": 1.5,
            "top_p": 0.9,
            "max_tokens": 64,
            "stop": ["END"],
        }
    )
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Hi"}]},
        {"role": "model", "parts": [{"text": "Hello!"}]},
        {"role": "user", "parts": [{"text": "Bye"}]},
    ]
    assert body["generationConfig"] == {
        "temperature": 1.5,
        "topP": 0.9,
        "maxOutputTokens": 64,
        "stopSequences": ["END"],
        "thinkingConfig": {"thinkingBudget": 0},
    }


def test_tool_choice_as_function_calling_config():
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    request = {"messages": [{"role": "user", "content": "x"}], "tools": tools}
    named = {"type": "function", "function": {"name": "get_weather"}}
    required = body_for({**request, "tool_choice": "required"})
    assert required["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert body_for({**request, "tool_choice": named})["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}
    }
    assert "toolConfig" not in body_for(request)


def test_tools_calls_and_results_matched_by_name():
    body = body_for(
        {
            "messages": [
                {"role": "user", "content": "Weather in Oslo and Rome?"},
                {
                    "role": "assistant",
                    "content": [],
                    "tool_calls": [
                        {
                            "id": "gemini-call-1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": {"city": "Oslo"}},
                        },
                        {
                            "id": "fc_server_2",
                            "type": "function",
                            "function": {"name": "weather", "arguments": {"city": "Rome"}},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "gemini-call-1", "content": '{"temp": 3}'},
                {"role": "tool", "tool_call_id": "fc_server_2", "content": "20°C"},
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
                            "required": ["city"],
                            "additionalProperties": False,
                        },
                    },
                },
                {"type": "function", "function": {"name": "now"}},
            ],
        }
    )
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "weather",
                    "description": "Weather now",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {"city": {"type": "STRING"}},
                        "required": ["city"],
                    },
                },
                {"name": "now"},
            ]
        }
    ]
    assert body["contents"][1] == {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}},
            {"functionCall": {"name": "weather", "args": {"city": "Rome"}, "id": "fc_server_2"}},
        ],
    }
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "weather", "response": {"temp": 3}}},
            {
                "functionResponse": {
                    "name": "weather",
                    "response": {"result": "20°C"},
                    "id": "fc_server_2",
                }
            },
        ],
    }


def test_tool_result_for_an_unknown_call_is_refused_naming_the_field():
    with pytest.raises(InvalidInputError) as info:
        wire.build_request(
            InferInput(messages=[Message("user", "x"), Message("tool", "r", tool_call_id="nope")]),
            model=MODEL,
        )
    assert info.value.errors[0]["path"] == "$.messages[1].tool_call_id"
    assert "by name" in info.value.message


@pytest.mark.parametrize(
    ("model", "data", "expected"),
    [
        ("gemini-2.5-flash", {"reasoning": True}, {"includeThoughts": True, "thinkingBudget": -1}),
        (
            "gemini-2.5-pro",
            {"reasoning": "low"},
            {"includeThoughts": True, "thinkingBudget": 1024},
        ),
        (
            "gemini-2.5-flash",
            {"reasoning": "high"},
            {"includeThoughts": True, "thinkingBudget": 24576},
        ),
        (
            "gemini-3-pro-preview",
            {"reasoning": "medium"},
            {"includeThoughts": True, "thinkingLevel": "high"},
        ),
        (
            "gemini-3.5-flash",
            {"reasoning": "minimal"},
            {"includeThoughts": True, "thinkingLevel": "minimal"},
        ),
        ("gemini-3.5-flash", {"reasoning": True}, {"includeThoughts": True}),
        ("gemini-2.5-flash", {}, {"thinkingBudget": 0}),
        ("gemini-2.5-flash-lite", {}, {"thinkingBudget": 0}),
        ("gemini-2.5-pro", {}, None),
        ("gemini-2.0-flash", {}, None),
        ("gemini-3.5-flash", {}, None),
    ],
)
def test_reasoning_maps_to_thinking_config(model, data, expected):
    body = body_for({"messages": [{"role": "user", "content": "x"}], **data}, model=model)
    assert body.get("generationConfig", {}).get("thinkingConfig") == expected


def test_output_schema_becomes_response_schema():
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}},
        "required": ["n"],
    }
    body = body_for(
        {"messages": [{"role": "user", "content": "x"}], "output_schema": schema},
        model="gemini-2.0-flash",
    )
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseSchema": {
            "type": "OBJECT",
            "properties": {"n": {"type": "INTEGER"}},
            "required": ["n"],
        },
    }


def test_images_and_audio_are_inline_data_and_urls_are_refused():
    body = body_for(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                        {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
                    ],
                }
            ]
        }
    )
    assert body["contents"][0]["parts"][1:] == [
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
        {"inlineData": {"mimeType": "audio/wav", "data": WAV}},
    ]
    with pytest.raises(UnsupportedContentError) as info:
        wire.build_request(
            InferInput(messages=[Message("user", [image_part("https://x.test/a.png")])]),
            model=MODEL,
        )
    err = info.value
    assert err.details["provider"] == "gemini" and err.details["content_type"] == "image_url"
    assert "base64" in err.message and err.errors[0]["path"] == "$.messages[0].content[0]"
    with pytest.raises(UnsupportedContentError, match="wma"):
        wire.build_request(
            InferInput(messages=[Message("user", [audio_part(WAV, "wma")])]), model=MODEL
        )
    with pytest.raises(UnsupportedContentError, match="image/bmp"):
        wire.build_request(
            InferInput(messages=[Message("user", [image_part(f"data:image/bmp;base64,{PNG}")])]),
            model=MODEL,
        )


def test_encode_part_gives_gemini_parts():
    # images and audio by their content plugins' Gemini encoders, once CONTENT lets them in
    assert wire.encode_part(image_part("data:image/png;base64,iVBORw0KGgo=")) == {
        "inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}
    }
    assert wire.encode_part(audio_part("SUQz", "mp3")) == {
        "inlineData": {"mimeType": "audio/mp3", "data": "SUQz"}
    }
    assert wire.encode_part(TextPart("hi")) == {"text": "hi"}
    with pytest.raises(UnsupportedContentError):
        wire.encode_part(image_part("https://x.test/a.png"))


def test_inline_data_over_the_request_limit_is_refused():
    chunk = "A" * (wire.MAX_INLINE_BYTES // 2 + 4)
    parts = [audio_part(chunk, "mp3"), audio_part(chunk, "mp3")]
    with pytest.raises(UnsupportedContentError, match="20 MB"):
        wire.build_request(InferInput(messages=[Message("user", parts)]), model=MODEL)


def test_signatures_return_to_the_part_they_came_with():
    history = Message(
        "assistant",
        [TextPart("Let me look.")],
        reasoning=[
            ReasoningPart("Thinking about weather", "thought:" + SIG),
            ReasoningPart("unsigned summary"),
            ReasoningPart("", "functionCall.1:" + SIG[::-1]),
            ReasoningPart("", "redacted_thinking:anthropic-data"),
        ],
        tool_calls=[
            ToolCall("gemini-call-a", "weather", {"city": "Oslo"}),
            ToolCall("gemini-call-b", "time", {}),
        ],
    )
    inputs = InferInput(
        messages=[
            Message("user", "go"),
            history,
            Message("tool", "3", tool_call_id="gemini-call-a"),
            Message("tool", "noon", tool_call_id="gemini-call-b"),
        ]
    )
    body = wire.build_request(inputs, model=MODEL)
    assert body["contents"][1]["parts"] == [
        {"text": "Thinking about weather", "thought": True, "thoughtSignature": SIG},
        {"text": "Let me look."},
        {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}},
        {"functionCall": {"name": "time", "args": {}}, "thoughtSignature": SIG[::-1]},
    ]
    text_only = Message("assistant", "", reasoning=[ReasoningPart("", "text:" + SIG)])
    body = check(
        wire.build_request(
            InferInput(messages=[Message("user", "a"), text_only, Message("user", "b")]),
            model=MODEL,
        )
    )
    assert body["contents"][1]["parts"] == [{"text": "", "thoughtSignature": SIG}]


def test_gemini_3_calls_without_a_signature_get_the_documented_placeholder():
    def calls(name):
        return Message("assistant", "", tool_calls=[ToolCall(f"gemini-call-{name}", name, {})])

    def result(name):
        return Message("tool", "ok", tool_call_id=f"gemini-call-{name}")

    history = [Message("user", "old"), calls("a"), result("a"), Message("user", "now")]
    history += [calls("b"), result("b"), calls("c"), result("c")]
    signed = Message(
        "assistant",
        "",
        reasoning=[ReasoningPart("", "functionCall.0:" + SIG)],
        tool_calls=[ToolCall("gemini-call-d", "d", {})],
    )
    history += [signed, Message("tool", "ok", tool_call_id="gemini-call-d")]
    body = check(wire.build_request(InferInput(messages=history), model="gemini-3-pro-preview"))
    signatures = [
        p.get("thoughtSignature")
        for c in body["contents"]
        for p in c["parts"]
        if "functionCall" in p
    ]
    # the previous turn is not validated by Gemini, so it is left as it was
    assert signatures == [None, wire.SKIP_SIGNATURE, wire.SKIP_SIGNATURE, SIG]
    older = check(wire.build_request(InferInput(messages=history), model=MODEL))
    assert [
        p.get("thoughtSignature")
        for c in older["contents"]
        for p in c["parts"]
        if "functionCall" in p
    ] == [None, None, None, SIG]


# -- schemas ---------------------------------------------------------------------------


def test_schema_conversion_of_what_gemini_does_not_take():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": False,
        "$defs": {
            "Point": {"type": "object", "properties": {"x": {"type": "number", "format": "double"}}}
        },
        "properties": {
            "where": {"$ref": "#/$defs/Point"},
            "maybe": {"type": ["string", "null"], "format": "email"},
            "kind": {"const": "fixed"},
            "level": {"enum": [1, 2, 3], "type": "integer"},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "uniqueItems": True,
                "examples": [["a"]],
            },
            "both": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
                ]
            },
        },
        "required": ["where", "ghost"],
    }
    out = to_gemini_schema(schema)
    assert out == {
        "type": "OBJECT",
        "properties": {
            "where": {
                "type": "OBJECT",
                "properties": {"x": {"type": "NUMBER", "format": "double"}},
            },
            "maybe": {"type": "STRING", "nullable": True},
            "kind": {"type": "STRING", "enum": ["fixed"]},
            "level": {"type": "INTEGER"},
            "either": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
            "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "example": ["a"]},
            "both": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}, "required": ["a"]},
        },
        "required": ["where"],
    }
    assert schema_problems(out, "parameters", top_level_object=True) == []


def test_recursive_refs_stop_at_a_plain_object():
    tree = {
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
        "$ref": "#/$defs/Node",
    }
    out = to_gemini_schema(tree)
    depth, node = 0, out
    while "properties" in node:
        node, depth = node["properties"]["child"], depth + 1
    assert node == {"type": "OBJECT"} and depth == MAX_REF_DEPTH
    assert schema_problems(out, "p") == []


json_schemas = st.recursive(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "number", "boolean"])},
        optional={
            "description": st.text(max_size=5),
            "format": st.sampled_from(["email", "int64", "date-time", "uri"]),
            "enum": st.lists(st.text(max_size=3), min_size=1, max_size=3),
            "minimum": st.integers(),
            "exclusiveMaximum": st.integers(),
            "const": st.text(max_size=3),
            "examples": st.lists(st.integers(), max_size=2),
        },
    ),
    lambda inner: st.one_of(
        st.fixed_dictionaries(
            {
                "type": st.just("object"),
                "properties": st.dictionaries(
                    st.from_regex(r"[a-z]{1,6}", fullmatch=True), inner, max_size=3
                ),
            },
            optional={
                "required": st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), max_size=3),
                "additionalProperties": st.booleans(),
            },
        ),
        st.fixed_dictionaries(
            {"type": st.just("array"), "items": inner}, optional={"minItems": st.integers(0, 3)}
        ),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)}),
        st.fixed_dictionaries(
            {"oneOf": st.lists(inner | st.just({"type": "null"}), min_size=1, max_size=3)}
        ),
        st.fixed_dictionaries(
            {
                "type": st.lists(
                    st.sampled_from(["string", "integer", "null"]),
                    min_size=1,
                    max_size=3,
                    unique=True,
                )
            }
        ),
    ),
    max_leaves=10,
)


@given(json_schemas)
def test_any_json_schema_converts_to_one_gemini_accepts(schema):
    out = to_gemini_schema(schema)
    assert schema_problems(out, "schema") == []
    declaration = function_declaration(FunctionDescription("f", "", schema))
    assert (
        schema_problems(
            declaration.get("parameters", {"type": "OBJECT", "properties": {"a": {}}}),
            "p",
            top_level_object=True,
        )
        == []
    )


# -- the request validator catches what the API refuses ---------------------------------


def test_validator_catches_malformed_requests():
    good = body_for({"messages": [{"role": "user", "content": "x"}]})
    assert request_problems(PATH, {"alt": "sse", "key": "AIza"}, HEADERS, good) == [
        "query: expected exactly alt=sse (the key belongs in a header), got ['alt', 'key']"
    ]
    assert any(
        "x-goog-api-key" in p
        for p in request_problems(PATH, {"alt": "sse"}, {"content-type": "application/json"}, good)
    )
    cases = [
        ({**good, "contents": [{"role": "assistant", "parts": [{"text": "x"}]}]}, "role"),
        (
            {**good, "contents": [{"role": "user", "parts": [{"text": "x", "inlineData": {}}]}]},
            "exactly one",
        ),
        (
            {
                **good,
                "contents": [
                    {"role": "user", "parts": [{"text": "a"}]},
                    {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                    {"role": "user", "parts": [{"text": "no response"}]},
                ],
            },
            "number of function response",
        ),
        (
            {
                **good,
                "contents": [
                    {
                        "role": "user",
                        "parts": [{"functionResponse": {"name": "f", "response": "str"}}],
                    }
                ],
            },
            "Struct",
        ),
        (
            {
                **good,
                "generationConfig": {
                    "thinkingConfig": {"thinkingBudget": 5, "thinkingLevel": "low"}
                },
            },
            "mutually exclusive",
        ),
        (
            {
                **good,
                "tools": [
                    {"functionDeclarations": [{"name": "f", "parameters": {"type": "object"}}]}
                ],
            },
            "must be one of",
        ),
        (
            {
                **good,
                "tools": [
                    {
                        "functionDeclarations": [
                            {"name": "f", "parameters": {"type": "OBJECT", "properties": {}}}
                        ]
                    }
                ],
            },
            "non-empty",
        ),
        (
            {
                **good,
                "tools": [
                    {
                        "functionDeclarations": [
                            {
                                "name": "f",
                                "parameters": {
                                    "type": "OBJECT",
                                    "properties": {"a": {"type": "STRING"}},
                                    "additionalProperties": False,
                                },
                            }
                        ]
                    }
                ],
            },
            "unknown field",
        ),
        ({**good, "system_instruction": {}}, "unknown field"),
        (
            {
                **good,
                "contents": [
                    {"role": "model", "parts": [{"text": "x", "thoughtSignature": "not base64!"}]}
                ],
            },
            "base64",
        ),
    ]
    for body, fragment in cases:
        problems = request_problems(PATH, {"alt": "sse"}, HEADERS, body)
        assert any(fragment in p for p in problems), (fragment, problems)


# -- the stream ------------------------------------------------------------------------


def test_whole_part_records_become_text_reasoning_and_tool_calls():
    items, acc = feed_all(
        [
            record({"text": "Thinking about", "thought": True}),
            record({"text": " weather…", "thought": True, "thoughtSignature": SIG}),
            record(
                {"text": "Check"},
                usage={"promptTokenCount": 31, "candidatesTokenCount": 1, "totalTokenCount": 32},
            ),
            record({"text": "ing both."}),
            record(
                {
                    "functionCall": {"name": "weather", "args": {"city": "Oslo"}},
                    "thoughtSignature": SIG[::-1],
                },
                {"functionCall": {"id": "fc_7", "name": "weather", "args": {"city": "Rome"}}},
                {"executableCode": {"code": "print(1)"}},
                finish="STOP",
                usage={
                    "promptTokenCount": 31,
                    "candidatesTokenCount": 9,
                    "thoughtsTokenCount": 120,
                    "totalTokenCount": 160,
                },
            ),
        ]
    )
    assert items[-1]["finish_reason"] == "tool_calls"
    assert items[-1]["usage"] == {"input_tokens": 31, "output_tokens": 129, "reasoning_tokens": 120}
    assert sum(1 for i in items if i["finish_reason"]) == 1
    calls = [i["message"]["tool_calls"][0] for i in items if "tool_calls" in i["message"]]
    assert calls == [
        {
            "index": 0,
            "id": "gemini-call-0",
            "type": "function",
            "function": {"name": "weather", "arguments": ""},
        },
        {"index": 0, "type": "function", "function": {"arguments": '{"city": "Oslo"}'}},
        {
            "index": 1,
            "id": "fc_7",
            "type": "function",
            "function": {"name": "weather", "arguments": ""},
        },
        {"index": 1, "type": "function", "function": {"arguments": '{"city": "Rome"}'}},
    ]
    message = acc.message()
    assert message.text == "Checking both."
    assert message.reasoning == [
        ReasoningPart("Thinking about weather…", "thought:" + SIG),
        ReasoningPart("", "functionCall.0:" + SIG[::-1]),
    ]


@pytest.mark.parametrize(
    ("reason", "ours"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("FUTURE_REASON", "stop"),
    ],
)
def test_finish_reasons_map(reason, ours):
    items, _ = feed_all([record({"text": "x"}, finish=reason)])
    assert items[-1]["finish_reason"] == ours


def test_blocked_prompt_finishes_as_content_filter():
    items, acc = feed_all(
        [{"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 4}}]
    )
    assert (
        items[-1]["finish_reason"] == "content_filter" and items[-1]["usage"]["input_tokens"] == 4
    )
    assert acc.message().text == ""


def test_errors_truncation_and_malformed_records_are_typed():
    translator = wire.StreamTranslator()
    translator.feed(record({"text": "partial"}))
    with pytest.raises(ModelError, match="before a finishReason"):
        translator.close()
    with pytest.raises(ModelError, match="malformed"):
        translator.feed({"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]})
    with pytest.raises(ModelError, match="malformed"):
        translator.feed([1, 2])
    with pytest.raises(ProviderUnavailableError) as info:
        translator.feed(
            {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}
        )
    assert info.value.details["provider_message"] == "Internal error encountered."
    assert info.value.details["mid_stream"] and info.value.details["code"] == "INTERNAL"
    bad_call = wire.StreamTranslator()
    bad_call.feed(record(finish="MALFORMED_FUNCTION_CALL"))
    with pytest.raises(ModelError, match="MALFORMED_FUNCTION_CALL"):
        bad_call.close()


def test_error_details_retry_delay_and_daily_quota():
    per_minute = wire.parse_error_body(
        json.dumps(
            {
                "error": {
                    "code": 429,
                    "status": "RESOURCE_EXHAUSTED",
                    "message": "slow down",
                    "details": [
                        {
                            "@type": wire.QUOTA_FAILURE,
                            "violations": [
                                {"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}
                            ],
                        },
                        {"@type": wire.RETRY_INFO, "retryDelay": "37s"},
                    ],
                }
            }
        )
    )
    assert wire.retry_delay(per_minute) == 37.0 and not wire.is_daily_quota(per_minute)
    daily = wire.parse_error_body(
        [
            {
                "error": {
                    "code": 429,
                    "details": [
                        {
                            "@type": wire.QUOTA_FAILURE,
                            "violations": [
                                {"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}
                            ],
                        },
                        {"@type": wire.RETRY_INFO, "retryDelay": "0.5s"},
                    ],
                }
            }
        ]
    )
    assert wire.is_daily_quota(daily) and wire.retry_delay(daily) == 0.5
    assert wire.parse_error_body(b"<html>") == {} and wire.retry_delay({}) is None


# -- properties ------------------------------------------------------------------------

signatures = st.binary(min_size=1, max_size=24).map(lambda b: base64.b64encode(b).decode())


@given(
    thoughts=st.lists(texts, max_size=3),
    thought_signature=st.none() | signatures,
    answer=st.lists(texts, max_size=4),
    answer_signature=st.none() | signatures,
    tool_calls=tool_calls,
    call_signature=signatures,
    usages=st.lists(st.integers(0, 5000), min_size=1, max_size=4),
)
def test_any_stream_folds_back_and_signatures_round_trip(
    thoughts, thought_signature, answer, answer_signature, tool_calls, call_signature, usages
):
    records = [record({"text": t, "thought": True}) for t in thoughts]
    if thoughts and thought_signature:
        records[-1]["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = thought_signature
    records += [
        record(
            {"text": t},
            usage={"promptTokenCount": 5, "candidatesTokenCount": usages[k % len(usages)]},
        )
        for k, t in enumerate(answer)
    ]
    call_parts = [{"functionCall": {"name": n, "args": a}} for n, a in tool_calls]
    if call_parts:
        call_parts[0]["thoughtSignature"] = call_signature
    final = [*call_parts]
    if answer_signature and not call_parts:
        final.append({"text": "", "thoughtSignature": answer_signature})
    records.append(
        record(
            *final, finish="STOP", usage={"promptTokenCount": 5, "candidatesTokenCount": usages[-1]}
        )
    )
    items, acc = feed_all(records)
    assert items[-1]["usage"] == {
        "input_tokens": 5,
        "output_tokens": usages[-1],
    }  # the last, not a sum
    assert items[-1]["finish_reason"] == ("tool_calls" if tool_calls else "stop")
    message = acc.message()
    assert message.text == "".join(answer)
    assert [(c.name, c.arguments) for c in message.tool_calls] == tool_calls
    # next turn: every signature goes back on the part it came with
    follow_up = [Message("tool", "ok", tool_call_id=c.id) for c in message.tool_calls] or [
        Message("user", "more")
    ]
    body = check(
        wire.build_request(
            InferInput(messages=[Message("user", "go"), message, *follow_up]), model=MODEL
        )
    )
    if not body["contents"][1:] or body["contents"][1]["role"] != "model":
        assert not (answer or tool_calls or (thoughts and thought_signature) or answer_signature)
        return
    sent = body["contents"][1]["parts"]
    thought_parts = [p for p in sent if p.get("thought")]
    assert thought_parts == (
        [{"text": "".join(thoughts), "thought": True, "thoughtSignature": thought_signature}]
        if thoughts and thought_signature
        else []
    )
    sent_calls = [p for p in sent if "functionCall" in p]
    assert [p["functionCall"] for p in sent_calls] == [
        {"name": n, "args": a} for n, a in tool_calls
    ]
    if sent_calls:
        assert sent_calls[0]["thoughtSignature"] == call_signature
        assert all("thoughtSignature" not in p for p in sent_calls[1:])
    answer_parts = [p for p in sent if "text" in p and not p.get("thought")]
    if answer_signature and not tool_calls:
        assert answer_parts[-1]["thoughtSignature"] == answer_signature
    else:
        assert all("thoughtSignature" not in p for p in answer_parts)
