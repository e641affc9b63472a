"""ferrule_kit.content.messages.system_and_turns: a conversation split for a provider whose system
prompt stands apart and whose turns alternate roles (the piece Anthropic's and Gemini's
wires share)."""

from __future__ import annotations

from typing import Any

import pytest
from ferrule_kit.content.messages import Message, ValuePart, system_and_turns
from ferrule_kit.errors import UnsupportedContentError


def conversation(*messages: dict[str, Any]) -> list[Message]:
    return [Message.from_dict(m) for m in messages]


def text_turn(message: Message, where: str) -> tuple[str, list[dict[str, Any]]]:
    role = "model" if message.role == "assistant" else "user"
    return role, [{"text": message.text, "at": where}] if message.text else []


def test_system_texts_stand_apart_and_same_role_messages_join_one_turn():
    system, turns = system_and_turns(
        conversation(
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "system", "content": ""},  # nothing to say: no text kept
            {"role": "user", "content": "there"},
            {"role": "assistant", "content": "Hello"},
            {"role": "tool", "tool_call_id": "c1", "content": "3°C"},
        ),
        "test",
        text_turn,
    )
    assert system == ["Be brief."]
    assert turns == [
        ("user", [{"text": "Hi", "at": "$.messages[1]"}, {"text": "there", "at": "$.messages[3]"}]),
        ("model", [{"text": "Hello", "at": "$.messages[4]"}]),
        ("user", [{"text": "3°C", "at": "$.messages[5]"}]),
    ]


def test_a_message_with_no_blocks_adds_nothing_and_join_decides_the_order():
    def join(role, previous, blocks):
        return [*blocks, *previous]  # the newest first

    _, turns = system_and_turns(
        conversation(
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "b"},
        ),
        "test",
        text_turn,
        join=join,
    )
    assert turns == [
        ("user", [{"text": "b", "at": "$.messages[2]"}, {"text": "a", "at": "$.messages[0]"}])
    ]


def test_a_system_message_of_more_than_text_is_refused_naming_the_part():
    system = Message(role="system", contents=["Be brief.", ValuePart({"tone": "dry"})])
    with pytest.raises(UnsupportedContentError) as info:
        system_and_turns([system], "test", text_turn)
    assert info.value.errors[0]["path"] == "$.messages[0].content[1]"
    assert info.value.details["provider"] == "test"
