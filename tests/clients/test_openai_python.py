"""The official ``openai`` Python SDK against `ferrule serve`, as its README uses it."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from client_server import EMBEDDER, Served
from shapes import WEATHER, City

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def client(served: Served) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.openai_base, api_key=served.api_key, max_retries=0)


def test_chat(client):
    reply = client.chat.completions.create(
        model="test", messages=[{"role": "user", "content": "Hello there"}]
    )
    assert reply.choices[0].message.content == "Hello there"


def test_streaming(client):
    stream = client.chat.completions.create(
        model="test", messages=[{"role": "user", "content": "Hello there"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "Hello there"


def test_multi_turn_with_reasoning_put_back(client):
    messages: list[Any] = [{"role": "user", "content": "first question"}]
    first = client.chat.completions.create(model="test", messages=messages, reasoning_effort="low")
    assert first.choices[0].message.reasoning_content  # type: ignore[attr-defined]
    messages += [first.choices[0].message, {"role": "user", "content": "second question"}]
    second = client.chat.completions.create(model="test", messages=messages, reasoning_effort="low")
    assert second.choices[0].message.content == "second question"


def _weather(arguments: str) -> str:
    return f"3 degrees in {json.loads(arguments)['city']}"


def test_tools_round_trip(client):
    messages: list[Any] = [{"role": "user", "content": "Oslo"}]
    first = client.chat.completions.create(model="tool-bot", messages=messages, tools=[WEATHER])
    [call] = first.choices[0].message.tool_calls
    messages.append(first.choices[0].message)
    messages.append(
        {"role": "tool", "tool_call_id": call.id, "content": _weather(call.function.arguments)}
    )
    final = client.chat.completions.create(model="tool-bot", messages=messages, tools=[WEATHER])
    assert final.choices[0].message.content == "The tool said: 3 degrees in Oslo"


def test_streamed_tools_round_trip(client):
    messages: list[Any] = [{"role": "user", "content": "Oslo"}]
    with client.chat.completions.stream(
        model="tool-bot", messages=messages, tools=[WEATHER]
    ) as stream:
        message = stream.get_final_completion().choices[0].message
    [call] = message.tool_calls
    messages += [
        message.model_dump(),
        {"role": "tool", "tool_call_id": call.id, "content": _weather(call.function.arguments)},
    ]
    with client.chat.completions.stream(
        model="tool-bot", messages=messages, tools=[WEATHER]
    ) as stream:
        text = "".join(e.delta for e in stream if e.type == "content.delta")
    assert text == "The tool said: 3 degrees in Oslo"


def test_structured_output(client):
    reply = client.chat.completions.parse(
        model="test", messages=[{"role": "user", "content": "Oslo"}], response_format=City
    )
    assert reply.choices[0].message.parsed == City(name="Oslo", population=0)


def test_embeddings(client):
    reply = client.embeddings.create(model=EMBEDDER, input=["a cat", "a dog"])
    assert [len(d.embedding) for d in reply.data] == [384, 384]


def test_responses_api(client):
    reply = client.responses.create(model="test", input="Hello there")
    assert reply.output_text == "Hello there"
    with client.responses.stream(model="tool-bot", input="Oslo", tools=[{
        "type": "function", **WEATHER["function"]}]) as stream:  # fmt: skip
        final = stream.get_final_response()
    [call] = final.output
    result = {"type": "function_call_output", "call_id": call.call_id, "output": "3 degrees"}
    answer = client.responses.create(
        model="tool-bot",
        input=[{"role": "user", "content": "Oslo"}, call, result],
        tools=[{"type": "function", **WEATHER["function"]}],
    )
    assert answer.output_text == "The tool said: 3 degrees"
