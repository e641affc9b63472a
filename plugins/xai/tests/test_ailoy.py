"""Ailoy 0.1's raw ``grok`` type (`ferrule_kit.ailoy_models`) on this plugin's model, against a
loopback server speaking the provider's wire (every request validated): the kit's suite."""

from __future__ import annotations

import pytest
from ferrule import AsyncRuntime
from ferrule_kit.messages import ToolCall
from ferrule_kit.parts import OPENAI_COMPATIBLE
from ferrule_kit.testing import ScriptedTurn
from ferrule_kit.testing import chat_completions as wire
from ferrule_kit.testing.ailoy_models import (
    WEATHER,
    AiloyAPIModelConformance,
    AiloyAPIModelUnderTest,
)
from ferrule_kit.testing.loopback import LoopbackServer


class TestAiloyGrok(AiloyAPIModelConformance):
    @pytest.fixture
    async def ailoy(self, monkeypatch):
        async with LoopbackServer(validate=wire.validator()) as server, AsyncRuntime() as rt:
            monkeypatch.setenv("XAI_BASE_URL", server.url + "/v1")
            yield AiloyAPIModelUnderTest(rt, server, "grok", "grok-4", OPENAI_COMPATIBLE)


async def test_grok_s_stop_with_tool_calls_is_tool_calls_and_its_text_is_dropped(monkeypatch):
    # Ailoy 0.1's rule for Grok, which ends a reply that calls tools with "stop"
    call = ToolCall("call_1", "get_weather", {"city": "Seoul"})
    turn = ScriptedTurn(text=("Let me look.",), tool_calls=(call,), finish_reason="stop")
    async with LoopbackServer(validate=wire.validator()) as server, AsyncRuntime() as rt:
        monkeypatch.setenv("XAI_BASE_URL", server.url + "/v1")
        await rt.define("grok", "grok", {"api_key": "xai-key", "model": "grok-4"})
        server.script(wire.reply(turn))
        inputs = {
            "messages": [{"role": "user", "content": "Weather in Seoul?"}],
            "tools": [WEATHER],
        }
        items = [item async for item in rt.call_iter_method("grok", "infer", inputs)]
    assert [item["finish_reason"] for item in items] == ["tool_calls"]
    assert "content" not in items[0]["message"]
    assert items[0]["message"]["tool_calls"][0]["function"]["arguments"] == {"city": "Seoul"}
