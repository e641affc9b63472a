"""Ailoy 0.1's raw ``openai`` type (`ferrule_kit.ailoy_models`) on this plugin's model, against a
loopback server speaking the provider's wire (every request validated): the kit's suite."""

from __future__ import annotations

import pytest
from ferrule import AsyncRuntime
from ferrule_kit.messages import ToolCall
from ferrule_kit.parts import OPENAI
from ferrule_kit.testing import ScriptedTurn
from ferrule_kit.testing import chat_completions as wire
from ferrule_kit.testing.ailoy_models import (
    WEATHER,
    AiloyAPIModelConformance,
    AiloyAPIModelUnderTest,
)
from ferrule_kit.testing.loopback import LoopbackServer


class TestAiloyOpenai(AiloyAPIModelConformance):
    @pytest.fixture
    async def ailoy(self, monkeypatch):
        async with LoopbackServer(validate=wire.validator()) as server, AsyncRuntime() as rt:
            monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
            yield AiloyAPIModelUnderTest(rt, server, "openai", "gpt-4o", OPENAI)


async def test_text_beside_tool_calls_is_kept(monkeypatch):
    # OpenAI's own reply keeps both (Ailoy dropped the text for Grok only)
    call = ToolCall("call_1", "get_weather", {"city": "Seoul"})
    turn = ScriptedTurn(text=("Let me look.",), tool_calls=(call,), finish_reason="tool_calls")
    async with LoopbackServer(validate=wire.validator()) as server, AsyncRuntime() as rt:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        await rt.define("openai", "oai", {"api_key": "sk-key", "model": "gpt-4o"})
        server.script(wire.reply(turn))
        inputs = {
            "messages": [{"role": "user", "content": "Weather in Seoul?"}],
            "tools": [WEATHER],
        }
        (item,) = [item async for item in rt.call_iter_method("oai", "infer", inputs)]
    assert item["finish_reason"] == "tool_calls"
    assert item["message"]["content"] == "Let me look."
    assert [c["function"]["name"] for c in item["message"]["tool_calls"]] == ["get_weather"]
