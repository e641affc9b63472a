"""``openai`` and ``grok`` on ferrule-openai's and ferrule-xai's language models, against a
loopback server speaking OpenAI's wire (every request validated): the suite of Ailoy's
API-model ``infer``, and the rules that differ. (``claude`` and ``gemini`` run the same
suite against their providers' own wires in tests/compat/ailoy.)"""

from __future__ import annotations

import pytest
from ferrule import AsyncRuntime
from ferrule_ailoy.testing import WEATHER, APIModelSuite, APIModelUnderTest
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.content.parts import OPENAI, OPENAI_COMPATIBLE
from ferrule_kit.testing import ScriptedTurn
from ferrule_kit.testing import chat_completions as wire
from ferrule_kit.testing.loopback import LoopbackServer

QUESTION = {"role": "user", "content": "Weather in Seoul?"}


#: Ailoy's model name -> the variable that moves its provider's endpoint, the model id,
#: and the wire its parts are encoded for.
PROVIDERS = {
    "openai": ("OPENAI_BASE_URL", "gpt-4o", OPENAI),
    "grok": ("XAI_BASE_URL", "grok-4", OPENAI_COMPATIBLE),
}


class TestAPIModels(APIModelSuite):
    @pytest.fixture(params=sorted(PROVIDERS))
    async def ailoy(self, request, monkeypatch):
        variable, model, parts = PROVIDERS[request.param]
        async with LoopbackServer(validate=wire.validator()) as server, AsyncRuntime() as rt:
            monkeypatch.setenv(variable, server.url + "/v1")
            yield APIModelUnderTest(rt, server, request.param, model, parts)


async def _one_reply(monkeypatch, variable: str, component_type: str, turn: ScriptedTurn):
    async with LoopbackServer(validate=wire.validator()) as server, AsyncRuntime() as rt:
        monkeypatch.setenv(variable, server.url + "/v1")
        await rt.define(component_type, "m", {"api_key": "sk-key", "model": "m-1"})
        assert rt.kernel.components()["m/model"] in {"openai_language_model", "xai_language_model"}
        server.script(wire.reply(turn))
        inputs = {"messages": [QUESTION], "tools": [WEATHER]}
        return [item async for item in rt.call_iter_method("m", "infer", inputs)]


async def test_openai_keeps_text_beside_tool_calls(monkeypatch):
    call = ToolCall("call_1", "get_weather", {"city": "Seoul"})
    turn = ScriptedTurn(text=("Let me look.",), tool_calls=(call,), finish_reason="tool_calls")
    (item,) = await _one_reply(monkeypatch, "OPENAI_BASE_URL", "openai", turn)
    assert item["finish_reason"] == "tool_calls"
    assert item["message"]["content"] == "Let me look."
    assert [c["function"]["name"] for c in item["message"]["tool_calls"]] == ["get_weather"]


async def test_grok_s_stop_with_tool_calls_is_tool_calls_and_its_text_is_dropped(monkeypatch):
    # Ailoy 0.1's rule for Grok, which ends a reply that calls tools with "stop"
    call = ToolCall("call_1", "get_weather", {"city": "Seoul"})
    turn = ScriptedTurn(text=("Let me look.",), tool_calls=(call,), finish_reason="stop")
    items = await _one_reply(monkeypatch, "XAI_BASE_URL", "grok", turn)
    assert [item["finish_reason"] for item in items] == ["tool_calls"]
    assert "content" not in items[0]["message"]
    assert items[0]["message"]["tool_calls"][0]["function"]["arguments"] == {"city": "Seoul"}
