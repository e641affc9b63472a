"""Agno's model classes, run as the cookbook runs them (`wire` and `program`: conftest)."""

from __future__ import annotations


def test_openai_chat_basic(wire, program):
    wire.says("The lights went out. Something breathed in the dark.")
    scope = program("models_openai_basic")
    assert scope["run"].content == "The lights went out. Something breathed in the dark."
    assert wire.last["model"] == "gpt-4o"
    assert "horror story" in wire.text_sent()
