"""The kit's Ailoy 0.1 API-model types (`ferrule_kit.lmspec.ailoy_api_model_type`,
`ferrule_kit.ailoy_models`): the description a provider plugin registers, and the one item
its ``infer`` answers from a collected stream. The types on each provider's real model and
wire are checked by `ferrule_kit.testing.ailoy_models`, in the provider plugins' tests."""

from __future__ import annotations

import pickle

import pytest
from ferrule_kernel import InvalidInputError
from ferrule_kit import lm
from ferrule_kit.ailoy_models import AiloyAPIModelAttributes, ailoy_item
from ferrule_kit.lmspec import AiloyAPIModelFactory, ailoy_api_model_type, language_model_type

PROVIDER = language_model_type("p_language_model", "p.model:create", "p.attributes:PAttributes")


def collected(*items: dict) -> lm.MessageAccumulator:
    accumulator = lm.MessageAccumulator()
    for item in items:
        accumulator.add(item)
    return accumulator


def test_the_type_wraps_the_provider_s_own_model() -> None:
    spec = ailoy_api_model_type("grok", PROVIDER, drops_text_with_tool_calls=True)
    assert spec.name == "grok" and spec.aliases == ()
    assert spec.attributes == "ferrule_kit.ailoy_models:AiloyAPIModelAttributes"
    (infer,) = spec.methods
    assert (infer.name, infer.streaming, infer.inputs) == (
        "infer",
        True,
        lm.__name__ + ":InferInput",
    )
    assert spec.factory == AiloyAPIModelFactory(
        "grok", "p.model:create", "p.attributes:PAttributes", True
    )
    assert "p_language_model" in spec.description
    # a description may travel to another process (a placement plugin's worker)
    assert pickle.loads(pickle.dumps(spec.factory)) == spec.factory


def test_attributes_are_ailoy_s_and_hide_the_key() -> None:
    attributes = AiloyAPIModelAttributes(api_key="sk-secret-0123", model="gpt-4o")
    assert "sk-secret" not in repr(attributes) and "gpt-4o" in repr(attributes)
    for field, values in {"api_key": ("", "m"), "model": ("k", "")}.items():
        with pytest.raises(InvalidInputError) as refused:
            AiloyAPIModelAttributes(*values)
        assert [e["path"] for e in refused.value.errors] == [field]


def test_the_item_carries_the_text_as_one_string() -> None:
    stream = collected(
        lm.text_delta("Joe "), lm.text_delta("Biden"), lm.finish("stop", lm.Usage(3, 2))
    )
    assert ailoy_item(stream, drops_text_with_tool_calls=False) == {
        "message": {"role": "assistant", "content": "Joe Biden"},
        "finish_reason": "stop",
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }
    empty = ailoy_item(collected(lm.finish("length")), drops_text_with_tool_calls=False)
    assert empty["message"] == {"role": "assistant", "content": ""}
    assert empty["finish_reason"] == "length"


CALL = (
    lm.tool_call_delta(0, id="call_1", name="f"),
    lm.tool_call_delta(0, arguments='{"x": '),
    lm.tool_call_delta(0, arguments="1}"),
)
WIRE_CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}


@pytest.mark.parametrize("drops", [False, True])
def test_a_reply_that_only_calls_tools_has_no_content(drops: bool) -> None:
    item = ailoy_item(collected(*CALL, lm.finish("tool_calls")), drops_text_with_tool_calls=drops)
    assert item == {
        "message": {"role": "assistant", "tool_calls": [WIRE_CALL]},
        "finish_reason": "tool_calls",
    }


def test_text_beside_tool_calls_is_kept_but_for_grok_and_stop_becomes_tool_calls() -> None:
    stream = collected(lm.text_delta("Let me see."), *CALL, lm.finish("stop"))
    kept = ailoy_item(stream, drops_text_with_tool_calls=False)
    assert kept["message"]["content"] == "Let me see." and kept["finish_reason"] == "tool_calls"
    dropped = ailoy_item(stream, drops_text_with_tool_calls=True)
    assert dropped == {
        "message": {"role": "assistant", "tool_calls": [WIRE_CALL]},
        "finish_reason": "tool_calls",
    }


def test_reasoning_asked_for_comes_back_as_ferrule_s_parts() -> None:
    stream = collected(lm.reasoning_delta("hm", "sig"), lm.text_delta("ok"), lm.finish("stop"))
    message = ailoy_item(stream, drops_text_with_tool_calls=False)["message"]
    assert message["reasoning"] == [{"type": "text", "text": "hm", "signature": "sig"}]
