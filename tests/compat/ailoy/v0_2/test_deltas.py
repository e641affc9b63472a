"""Ailoy 0.2's message spellings over ferrule's own: `MessageDelta` accumulation and
`finish`, `PartDelta` / `PartDeltaFunction`, `FinishReason`, and the Ailoy attributes of
`Message` and `Part` (``thinking``, ``id``, ``Part.Value``, ``call.function.name``)."""

from __future__ import annotations

import ferrule as ai
import pytest
from ferrule_kit.content.messages import ReasoningPart, ToolCall, ValuePart

Text = ai.PartDelta.Text
Function = ai.PartDelta.Function
WithStringArgs = ai.PartDeltaFunction.WithStringArgs


def test_deltas_accumulate_into_a_ferrule_message() -> None:
    acc = ai.MessageDelta()
    acc += ai.MessageDelta("assistant", thinking="Let me ")
    acc += ai.MessageDelta(thinking="see.", signature="sig-1")
    acc += ai.MessageDelta(contents=[Text("Hel")])
    acc += ai.MessageDelta(contents=[Text("lo")])
    acc += ai.MessageDelta(tool_calls=[Function("call_1", WithStringArgs("add", '{"a": '))])
    acc += ai.MessageDelta(tool_calls=[Function(None, WithStringArgs("", "1}"))])
    acc += ai.MessageDelta(
        tool_calls=[Function("call_2", ai.PartDeltaFunction.WithParsedArgs("neg", {"a": 2}))]
    )
    message = acc.finish()
    assert isinstance(message, ai.Message)
    assert message.text == "Hello" and message.thinking == "Let me see."
    assert message.reasoning == [ReasoningPart("Let me see.", "sig-1")]
    assert message.tool_calls == [
        ToolCall("call_1", "add", {"a": 1}),
        ToolCall("call_2", "neg", {"a": 2}),
    ]
    assert message.tool_calls[0].function.name == "add"
    # ``+`` leaves both sides alone
    left = ai.MessageDelta("assistant", [Text("a")])
    joined = left + ai.MessageDelta(contents=[Text("b")])
    assert left.contents == [Text("a")] and joined.finish().text == "ab"


def test_a_tool_delta_finishes_into_a_tool_message_with_a_value() -> None:
    message = ai.MessageDelta("tool", [ai.PartDelta.Value({"t": 35})], id="call_1").finish()
    assert message.role == "tool" and message.id == message.tool_call_id == "call_1"
    assert message.contents == [ai.Part.Value({"t": 35})]
    assert message.contents[0].value == {"t": 35}
    # on the wire (and so to every model) a value is its JSON text
    assert message.to_dict()["content"] == [{"type": "text", "text": '{"t": 35}'}]
    assert isinstance(message.contents[0], ValuePart)


def test_bad_deltas_are_refused_naming_the_field() -> None:
    with pytest.raises(ai.InvalidInputError) as caught:
        ai.MessageDelta("assistant") + ai.MessageDelta("user")
    assert caught.value.errors[0]["path"] == "role"
    with pytest.raises(ai.InvalidInputError, match="role"):
        ai.MessageDelta(contents=[Text("x")]).finish()
    bad = ai.MessageDelta("assistant", tool_calls=[Function("c", WithStringArgs("f", "{nope"))])
    with pytest.raises(ai.InvalidInputError) as caught:
        bad.finish()
    assert caught.value.errors[0]["path"] == "tool_calls[0].function.arguments"


def test_finish_reasons_compare_by_value() -> None:
    assert ai.FinishReason.Stop() == ai.FinishReason.Stop()
    assert ai.FinishReason.Stop() != ai.FinishReason.ToolCall()
    assert ai.FinishReason.Refusal("filtered") != ai.FinishReason.Refusal("other")
    assert isinstance(ai.FinishReason.Length(), ai.FinishReason)
    assert repr(ai.FinishReason.Stop()) == "FinishReason.Stop()"
    assert Text("x").part_type == "text"


def test_message_takes_ailoys_attributes() -> None:
    message = ai.Message("assistant", contents="Hi")
    message.thinking = "pondering"
    assert message.reasoning == [ReasoningPart("pondering")] and message.signature is None
    message.thinking = None
    assert message.reasoning == []
    tool = ai.Message("tool", contents=[ai.Part.Value(35)], tool_call_id="c1")
    tool.id = "c2"
    assert tool.tool_call_id == "c2"
