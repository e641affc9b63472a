"""The official ``anthropic`` Python SDK against `ferrule serve`'s ``/v1/messages``, as its
README uses it (the token is its API key, sent as ``x-api-key``)."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from client_server import Served
from shapes import ANTHROPIC_WEATHER as WEATHER
from shapes import City

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def client(served: Served) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=served.url, api_key=served.api_key, max_retries=0)


def test_chat(client):
    message = client.messages.create(
        model="test", max_tokens=256, messages=[{"role": "user", "content": "Hello there"}]
    )
    assert message.content[0].text == "Hello there"


def test_streaming(client):
    with client.messages.stream(
        model="test", max_tokens=256, messages=[{"role": "user", "content": "Hello there"}]
    ) as stream:
        assert "".join(stream.text_stream) == "Hello there"


def test_multi_turn_with_thinking_put_back(client):
    thinking = {"type": "enabled", "budget_tokens": 1024}
    messages: list[Any] = [{"role": "user", "content": "first question"}]
    first = client.messages.create(
        model="test", max_tokens=2048, messages=messages, thinking=thinking
    )
    assert first.content[0].type == "thinking"
    messages += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": "second question"},
    ]
    second = client.messages.create(
        model="test", max_tokens=2048, messages=messages, thinking=thinking
    )
    assert second.content[-1].text == "second question"


def _round_trip(client: anthropic.Anthropic, stream: bool) -> str:
    messages: list[Any] = [{"role": "user", "content": "Oslo"}]
    options = {"model": "tool-bot", "max_tokens": 256, "tools": [WEATHER]}
    if stream:
        with client.messages.stream(messages=messages, **options) as running:
            first = running.get_final_message()
    else:
        first = client.messages.create(messages=messages, **options)
    [call] = [b for b in first.content if b.type == "tool_use"]
    result = {
        "type": "tool_result",
        "tool_use_id": call.id,
        "content": f"3 degrees in {call.input['city']}",
    }
    messages += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [result]},
    ]
    if stream:
        with client.messages.stream(messages=messages, **options) as running:
            return "".join(running.text_stream)
    final = client.messages.create(messages=messages, **options)
    return final.content[-1].text


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_tools_round_trip(client, stream):
    assert _round_trip(client, stream) == "The tool said: 3 degrees in Oslo"


def test_structured_output(client):
    message = client.messages.parse(
        model="test",
        max_tokens=256,
        messages=[{"role": "user", "content": "Oslo"}],
        output_format=City,
    )
    assert message.parsed_output == City(name="Oslo", population=0)


def test_count_tokens(client):
    counted = client.messages.count_tokens(
        model="test", messages=[{"role": "user", "content": "three words here"}]
    )
    assert counted.input_tokens == 3
