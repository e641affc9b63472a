"""The data model: wire round trips, field-named errors, and the part helpers. Parts other
than text are the kit's test part type ``color`` (`parts_for_tests`), registered in-process."""

from __future__ import annotations

import base64

import attrs
import pytest
from ferrule_kernel import InvalidInputError, json_schema, structure_input
from ferrule_kit.content.messages import (
    Message,
    ReasoningPart,
    TextPart,
    ToolCall,
    converter,
    system_text,
)
from ferrule_kit.content.parts import decoded_size
from ferrule_kit.errors import UnsupportedContentError
from hypothesis import given
from hypothesis import strategies as st
from parts_for_tests import ColorPart

json_objects = st.dictionaries(
    st.text(max_size=5), st.none() | st.booleans() | st.integers() | st.text(max_size=5), max_size=3
)
parts = st.one_of(
    st.builds(TextPart, st.text()),
    st.builds(ColorPart, st.from_regex(r"\A#[0-9a-f]{6}\Z")),
)


def _message(role: str, contents: list, tool_call_id: str | None, **rest) -> Message:
    # What Message refuses (a tool message without its call's id, a user message without
    # content) is made valid: the round trip is about every valid message.
    if role == "tool" and tool_call_id is None:
        tool_call_id = "call_1"
    return Message(
        role,
        contents or ([TextPart("")] if role == "user" else []),
        tool_call_id=tool_call_id,
        **rest,
    )


messages = st.builds(
    _message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    contents=st.lists(parts, max_size=3),
    reasoning=st.lists(
        st.builds(ReasoningPart, st.text(), st.none() | st.text(min_size=1)), max_size=2
    ),
    tool_calls=st.lists(
        st.builds(ToolCall, st.text(min_size=1), st.text(min_size=1), json_objects), max_size=2
    ),
    tool_call_id=st.none() | st.text(min_size=1),
)


@given(messages)
def test_messages_round_trip_through_the_wire_shape(color, message):
    assert Message.from_dict(message.to_dict()) == message


@given(st.binary(max_size=100))
def test_decoded_size_is_the_length_of_the_decoded_bytes(data):
    assert decoded_size(base64.b64encode(data).decode()) == len(data)


def test_seed_shapes(color):
    message = Message(role="user", contents="What's John's favorite color?")
    assert isinstance(message.contents[0], TextPart)
    assert message.to_dict() == {
        "role": "user",
        "content": [{"type": "text", "text": "What's John's favorite color?"}],
    }
    mixed = Message("user", ["Describe:", ColorPart("#ff0000")])
    assert mixed.contents[0] == TextPart("Describe:")
    assert mixed.to_dict()["content"][1] == {"type": "color", "color": {"hex": "#ff0000"}}


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"role": "user", "content": [{"type": "text"}]}, "$.content[0].text"),
        (
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "color", "color": {}}],
            },
            "$.content[1].color.hex",
        ),
        (
            {"role": "user", "content": [{"type": "color", "color": {"hex": "red"}}]},
            "$.content[0].color.hex",
        ),
        ({"role": "user", "content": [{"type": "color", "color": {}, "x": 1}]}, "$.content[0].x"),
        ({"role": "user", "content": [{"text": "a"}]}, "$.content[0].type"),
        ({"role": "user", "content": [{"type": "text", "text": "a", "x": 1}]}, "$.content[0].x"),
        ({"role": "robot", "content": "hi"}, "$.role"),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": "{"}}],
            },
            "$.tool_calls[0].function.arguments",
        ),
    ],
)
def test_bad_wire_messages_name_the_field(color, data, path):
    with pytest.raises(InvalidInputError) as info:
        Message.from_dict(data)
    assert path in [e["path"] for e in info.value.errors], info.value.errors


@attrs.frozen
class Conversation:
    messages: list[Message]


@pytest.mark.parametrize(
    ("message", "path", "text"),
    [
        ({"role": "user", "content": 5}, "$.messages[0].content", "expected array or string"),
        (
            {"role": "user", "content": [{"type": "text", "text": "a", "x": 1}]},
            "$.messages[0].content[0].x",
            "unknown field",
        ),
        ({"role": "user", "content": [{"type": "text"}]}, "$.messages[0].content[0].text", ""),
    ],
)
def test_errors_name_the_wire_key_of_message_contents(message, path, text):
    # Message.contents is "content" on the wire: its field metadata says so.
    with pytest.raises(InvalidInputError) as info:
        structure_input({"messages": [message]}, Conversation, target="t", conv=converter)
    assert [e["path"] for e in info.value.errors] == [path]
    assert text in info.value.errors[0]["message"]
    assert "content" in json_schema(Message)["properties"]


def test_system_text_refuses_media_naming_the_part(color):
    assert system_text(Message("system", "Be brief."), "$.messages[0]", "anthropic") == "Be brief."
    with pytest.raises(UnsupportedContentError) as info:
        system_text(Message("system", ["x", ColorPart("#ff0000")]), "$.messages[0]", "gemini")
    assert info.value.errors[0]["path"] == "$.messages[0].content[1]"
    assert info.value.details["provider"] == "gemini"


def test_a_tool_message_needs_its_calls_id_and_a_user_message_content():
    from ferrule_kit.models.lm import parse_infer_input

    data = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "content": "3"},
            {"role": "user", "content": []},
            {"role": "user"},
        ]
    }
    with pytest.raises(InvalidInputError) as info:
        parse_infer_input(data)
    assert [e["path"] for e in info.value.errors] == [
        "$.messages[1].tool_call_id",
        "$.messages[2].content",
        "$.messages[3].content",
    ]
    # in Python too, where the message is made
    with pytest.raises(InvalidInputError, match="tool message answers the tool call"):
        Message("tool", "3")
    with pytest.raises(InvalidInputError, match="a user message needs content"):
        Message("user")
    assert Message("user", "").contents == [TextPart("")]  # empty text is content
    assert Message("assistant").contents == []  # an assistant may only call tools
