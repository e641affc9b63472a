"""Agno's model classes, run as the cookbook runs them (`wire` and `program`: conftest)."""

from __future__ import annotations

import json


def test_openai_chat_basic(wire, program):
    wire.says("The lights went out. Something breathed in the dark.")
    scope = program("models_openai_basic")
    assert scope["run"].content == "The lights went out. Something breathed in the dark."
    assert wire.last["model"] == "gpt-4o"
    assert "horror story" in wire.text_sent()


def test_openai_chat_parameters_are_sent(wire, program):
    wire.says("2, 3 and 5.")
    scope = program("models_openai_parameters")
    assert scope["response"].content == "2, 3 and 5."
    sent = wire.last
    assert sent["model"] == "gpt-4o-mini"
    assert sent["temperature"] == 0.2 and sent["top_p"] == 0.9
    assert sent["max_completion_tokens"] == 256
    assert sent["seed"] == 42
    assert sent["frequency_penalty"] == 0.3 and sent["presence_penalty"] == 0.1
    assert sent["stop"] == ["\n\n\n"] and sent["user"] == "cookbook-user"
    assert sent["parallel_tool_calls"] is False


def test_openai_chat_tool_use(wire, program):
    wire.calls("get_weather", city="Lisbon")
    wire.says("It is 21°C and clear in Lisbon.")
    scope = program("models_openai_tool_use")
    assert scope["calls"] == ["Lisbon"]  # the tool ran, with the model's argument
    assert scope["run"].content == "It is 21°C and clear in Lisbon."
    first, second = wire.bodies
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool"
    assert json.loads(tool_message["content"])["temperature_c"] == 21


def test_claude_basic_with_parameters(wire, program):
    wire.says("The mirror blinked first.")
    scope = program("models_anthropic_basic")
    assert scope["run"].content == "The mirror blinked first."
    sent = wire.last
    assert wire.requests[-1].path.endswith("/v1/messages")
    assert sent["model"] == "claude-sonnet-4-20250514"
    assert sent["max_tokens"] == 1024 and sent["temperature"] == 0.5
    assert sent["stop_sequences"] == ["</answer>"]


def test_claude_tool_use(wire, program):
    wire.calls("order_status", order_id="A-100")
    wire.says("Order A-100 has shipped.")
    scope = program("models_anthropic_tool_use")
    assert scope["looked_up"] == ["A-100"]
    assert scope["run"].content == "Order A-100 has shipped."
    result = wire.bodies[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "shipped" in json.dumps(result["content"])


def test_gemini_stream_with_parameters(wire, program):
    wire.says("The house was quiet. Then it whispered my name.")
    scope = program("models_gemini_stream")
    assert "".join(scope["pieces"]) == "The house was quiet. Then it whispered my name."
    assert ":streamGenerateContent" in wire.requests[-1].path
    config = wire.last["generationConfig"]
    assert config["temperature"] == 0.7 and config["maxOutputTokens"] == 200
    assert config["topP"] == 0.95


def test_gemini_tool_use(wire, program):
    wire.calls("to_fahrenheit", celsius=25)
    wire.says("25°C is 77°F.")
    scope = program("models_gemini_tool_use")
    assert scope["converted"] == [25]
    assert scope["run"].content == "25°C is 77°F."
    parts = wire.bodies[1]["contents"][-1]["parts"]
    response = next(p["functionResponse"] for p in parts if "functionResponse" in p)
    assert response["name"] == "to_fahrenheit" and "77" in json.dumps(response["response"])


def test_xai_basic_with_parameters(wire, program):
    wire.says("Grok says boo.")
    scope = program("models_xai_basic")
    assert scope["run"].content == "Grok says boo."
    assert wire.last["model"] == "grok-4"
    assert wire.last["temperature"] == 0.1 and wire.last["seed"] == 1234
