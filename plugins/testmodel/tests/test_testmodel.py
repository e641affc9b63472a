"""The test model through the real kernel: scripts, functions, echo and the LM contract's options."""

from __future__ import annotations

import json
from collections import deque

import jsonschema
import pytest
from ferrule import Runtime
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ModelError
from ferrule_kit.testing import fold
from ferrule_testmodel import ScriptedTurn, TestModel
from ferrule_testmodel.model import count_tokens, example_instance
from hypothesis import given
from hypothesis import strategies as st

USER = {"role": "user", "content": [{"type": "text", "text": "What is one plus two?"}]}


@pytest.fixture
def rt():
    with Runtime() as runtime:
        yield runtime


def infer(rt: Runtime, name: str, **inputs) -> list[dict]:
    inputs.setdefault("messages", [USER])
    return list(rt.call_iter_method(name, "infer", inputs))


def reply_from(inputs) -> dict:
    """A module-level function, reachable by import string."""
    return {"text": f"{len(inputs.messages)} message(s)", "reasoning": "counted"}


async def async_reply(inputs) -> str:
    return "async " + inputs.messages[-1].text


def test_echo_streams_the_last_user_message_word_by_word(rt):
    rt.define("test_language_model", "lm", {})
    items = infer(rt, "lm")
    texts = [i["message"]["content"][0]["text"] for i in items[:-1]]
    assert texts == ["What ", "is ", "one ", "plus ", "two?"]
    assert items[-1]["finish_reason"] == "stop"
    assert items[-1]["usage"] == {"input_tokens": 5, "output_tokens": 5}
    assert all(i["finish_reason"] is None for i in items[:-1])


def test_reasoning_only_when_asked(rt):
    rt.define(
        "test_language_model", "lm", {"turns": [{"text": "x", "reasoning": "think hard"}] * 2}
    )
    assert fold(infer(rt, "lm")).reasoning == []
    acc = fold(infer(rt, "lm", reasoning=True))
    assert [r.text for r in acc.reasoning] == ["think hard"]
    assert acc.usage == {"input_tokens": 5, "output_tokens": 3, "reasoning_tokens": 2}


def test_scripted_turns_in_order_then_a_typed_error(rt):
    rt.define(
        "test_language_model",
        "lm",
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "add", "arguments": {"a": 1, "b": 2}},
                        {"name": "neg", "arguments": {"x": 3}},
                    ]
                },
                {"text": "The sum is 3.", "chunk_size": 4},
            ]
        },
    )
    first = infer(rt, "lm")
    acc = fold(first)
    assert acc.finish_reason == "tool_calls"
    calls = acc.tool_calls()
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_1", "add", {"a": 1, "b": 2}),
        ("call_2", "neg", {"x": 3}),
    ]
    # arguments arrive in fragments, the first fragment of each call carrying id and name
    fragments = [i["message"]["tool_calls"][0] for i in first if "tool_calls" in i["message"]]
    assert len(fragments) > 2 and "id" not in fragments[1]
    second = infer(rt, "lm")
    assert [i["message"]["content"][0]["text"] for i in second[:-1]] == [
        "The ",
        "sum ",
        "is 3",
        ".",
    ]
    with pytest.raises(ModelError, match="2 turn"):
        infer(rt, "lm")


def test_function_by_import_string_and_async_python_function(rt):
    rt.define("test_language_model", "lm", {"function": f"{__name__}:reply_from"})
    acc = fold(infer(rt, "lm", reasoning=True))
    assert acc.message().text == "1 message(s)" and acc.reasoning[0].text == "counted"

    route = TestModel(function=async_reply).route(rt.kernel)
    rt.define(route.component_type, "lm2", route.attributes)
    assert fold(infer(rt, "lm2")).message().text == "async What is one plus two?"


@pytest.mark.parametrize("function", ["sys:exit", "os:system", "registered"])
async def test_function_names_code_so_only_this_process_may_give_it(function):
    # `ferrule serve` validates what clients send as an untrusted caller: the function
    # (any import string, or even the id of a registered one) is refused before the
    # factory runs, so nothing is imported or called.
    if function == "registered":
        function = TestModel(function=reply_from).function
    kernel = Runtime().kernel
    with pytest.raises(InvalidInputError) as info:
        await kernel.define("test_language_model", "lm", {"function": function})
    assert [e["path"] for e in info.value.errors] == ["$.function"]
    assert "never over the network" in info.value.message
    assert kernel.components() == {}


def test_a_function_id_must_be_registered_in_this_process(rt):
    with pytest.raises(InvalidInputError, match=r"\$\.function: is neither the id"):
        rt.define("test_language_model", "lm", {"function": "function-0123456789abcdef"})


def test_function_returning_nonsense_is_a_typed_error(rt):
    route = TestModel(function=lambda inputs: 42).route(rt.kernel)
    rt.define(route.component_type, "lm", route.attributes)
    with pytest.raises(ModelError, match="returned int"):
        infer(rt, "lm")


def test_max_tokens_truncates_with_finish_length(rt):
    rt.define(
        "test_language_model",
        "lm",
        {
            "turns": [
                {"text": "one two three four five"},
                {"text": "ok", "tool_calls": [{"name": "f", "arguments": {"a": "b c d"}}]},
            ]
        },
    )
    acc = fold(infer(rt, "lm", max_tokens=3))
    assert acc.message().text == "one two three" and acc.finish_reason == "length"
    assert acc.usage["output_tokens"] == 3
    acc = fold(infer(rt, "lm", max_tokens=2))  # text fits, the call does not
    assert acc.message().text == "ok" and acc.calls == {} and acc.finish_reason == "length"


def test_stop_strings_cut_the_text(rt):
    rt.define("test_language_model", "lm", {"turns": [{"text": "alpha beta STOP gamma"}]})
    acc = fold(infer(rt, "lm", stop=["STOP"]))
    assert acc.message().text == "alpha beta " and acc.finish_reason == "stop"


def test_output_schema_echo_gives_a_valid_instance(rt):
    schema = {
        "type": "object",
        "properties": {
            "answer": {"type": "string"},
            "score": {"type": "integer", "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "kind": {"enum": ["a", "b"]},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "number"}]},
        },
        "required": ["answer", "score"],
    }
    rt.define("test_language_model", "lm", {})
    value = json.loads(fold(infer(rt, "lm", output_schema=schema)).message().text)
    jsonschema.validate(value, schema)
    assert value["answer"] == "What is one plus two?"


def test_scripted_output_is_sent_as_json_text(rt):
    rt.define(
        "test_language_model", "lm", {"turns": [{"output": {"title": "Inception", "rating": 9}}]}
    )
    assert json.loads(fold(infer(rt, "lm")).message().text) == {"title": "Inception", "rating": 9}


def test_error_ends_the_stream_after_the_content(rt):
    rt.define(
        "test_language_model",
        "lm",
        {"turns": [{"text": "partial answer", "error": "backend fell over"}]},
    )
    seen = []
    with pytest.raises(ModelError, match="backend fell over"):
        for item in rt.call_iter_method("lm", "infer", {"messages": [USER]}):
            seen.append(item)
    assert "".join(i["message"]["content"][0]["text"] for i in seen) == "partial answer"


#: An ``add`` call and its result, after a user turn.
ADD_CALLED = [
    {
        "role": "assistant",
        "content": [],
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": {"a": 1}}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "3"}]},
]


def test_echo_after_tool_results(rt):
    rt.define("test_language_model", "lm", {})
    messages = [USER, *ADD_CALLED]
    acc = fold(infer(rt, "lm", messages=messages))
    assert acc.message().text == "Tool results: 3"
    # every message counts: 5 user words, the call (1 + its argument words), 1 result word
    assert acc.usage["input_tokens"] == 5 + 1 + count_tokens(json.dumps({"a": 1})) + 1


def test_count_tokens_is_infers_input_count_and_runs_no_turn(rt):
    rt.define("test_language_model", "lm", {"turns": [{"text": "the one scripted turn"}]})
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        USER,
        *ADD_CALLED,
    ]
    counted = rt.call_method("lm", "count_tokens", {"messages": messages})
    assert counted == {"input_tokens": 2 + 5 + 1 + count_tokens(json.dumps({"a": 1})) + 1}
    assert rt.kernel.component("lm").requests == deque()  # nothing generated
    acc = fold(infer(rt, "lm", messages=messages))  # the script's turn is still there
    assert acc.message().text == "the one scripted turn"
    assert acc.usage["input_tokens"] == counted["input_tokens"]


def test_usage_and_finish_reason_overrides(rt):
    rt.define(
        "test_language_model",
        "lm",
        {
            "turns": [
                {
                    "text": "x",
                    "finish_reason": "content_filter",
                    "usage": {"input_tokens": 7, "output_tokens": 9},
                }
            ]
        },
    )
    acc = fold(infer(rt, "lm"))
    assert acc.finish_reason == "content_filter" and acc.usage == {
        "input_tokens": 7,
        "output_tokens": 9,
    }


def test_the_component_keeps_the_requests_it_received(rt):
    rt.define("test_language_model", "lm", {})
    infer(rt, "lm", temperature=0.5)
    (request,) = rt.kernel.component("lm").requests
    assert request.temperature == 0.5 and request.messages[0].text == "What is one plus two?"


def test_bad_attributes_name_the_field(rt):
    with pytest.raises(InvalidInputError, match=r"\$\.turns\[0\]\.delay"):
        rt.define("test_language_model", "lm", {"turns": [{"delay": -1}]})
    with pytest.raises(InvalidInputError, match="either turns or function"):
        rt.define("test_language_model", "lm", {"turns": [{"text": "a"}], "function": "x:y"})
    with pytest.raises(InvalidInputError, match=r"\$\.turns\[0\]\.tool_calls\[0\]\.name"):
        rt.define("test_language_model", "lm", {"turns": [{"tool_calls": [{"arguments": {}}]}]})


def test_test_model_spec_routes_to_the_component_type(rt):
    model = TestModel(
        ["hi", {"reasoning": "r", "text": "there"}, ScriptedTurn(text="!")], chunk_size=2, delay=0.0
    )
    route = model.route(rt.kernel)
    assert route.component_type == "test_language_model"
    assert [t["text"] for t in route.attributes["turns"]] == ["hi", "there", "!"]
    rt.define(route.component_type, "lm", route.attributes)
    assert [i["message"]["content"][0]["text"] for i in infer(rt, "lm")[:-1]] == ["hi"]


def test_local_model_id_test_resolves_here(rt):
    from ferrule import LocalModel

    assert LocalModel("test").route(rt.kernel).component_type == "test_language_model"


@given(st.text(), st.one_of(st.none(), st.integers(1, 7)))
def test_streamed_pieces_join_back_to_the_text(text, size):
    from ferrule_testmodel.model import _pieces

    pieces = list(_pieces(text, size))
    assert "".join(pieces) == text
    if size is not None:
        assert all(len(p) <= size for p in pieces)


@given(st.integers(0, 5), st.lists(st.sampled_from(["a", "bb", " ", "\n", "c d"]), max_size=10))
def test_first_words_keeps_n_words(n, bits):
    from ferrule_testmodel.model import _first_words

    text = "".join(bits)
    cut = _first_words(text, n)
    assert text.startswith(cut) and count_tokens(cut) == min(n, count_tokens(text))


def test_example_instance_covers_common_schema_shapes():
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": ["null", "number"]},
            "t": {"type": "array", "prefixItems": [{"type": "boolean"}, {"const": 3}]},
            "all": {
                "allOf": [
                    {"type": "object"},
                    {"properties": {"z": {"type": "string", "default": "d"}}},
                ]
            },
        },
    }
    value = example_instance(schema, "txt")
    jsonschema.validate(value, schema)
    assert value == {"n": 0.0, "t": [False, 3], "all": {"z": "d"}}


def test_text_given_as_pieces_streams_exactly_those_pieces(rt):
    rt.define(
        "test_language_model",
        "lm",
        {"turns": [{"text": ["Hel", "lo", " you"]}, {"text": ["a b", " c"]}]},
    )
    assert [i["message"]["content"][0]["text"] for i in infer(rt, "lm")[:-1]] == [
        "Hel",
        "lo",
        " you",
    ]
    # cut by max_tokens, the pieces no longer fit and the text is re-chunked by word
    assert fold(infer(rt, "lm", max_tokens=2)).message().text == "a b"
    with pytest.raises(
        InvalidInputError, match=r"\$\.turns\[0\]\.text: expected a string or an array"
    ):
        rt.define("test_language_model", "bad", {"turns": [{"text": ["a", 1]}]})
