"""litellm against `ferrule serve`, as its docs use an OpenAI-compatible server: the
``openai/`` model prefix with ``api_base`` and ``api_key``."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from client_server import EMBEDDER, Served
from shapes import WEATHER, City

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost-map download at import
import litellm

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def options(served: Served) -> dict[str, Any]:
    return {"api_base": served.openai_base, "api_key": served.api_key, "num_retries": 0}


def test_chat(options):
    reply = litellm.completion(
        model="openai/test", messages=[{"role": "user", "content": "Hello there"}], **options
    )
    assert reply.choices[0].message.content == "Hello there"


def test_streaming(options):
    stream = litellm.completion(
        model="openai/test",
        messages=[{"role": "user", "content": "Hello there"}],
        stream=True,
        **options,
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "Hello there"


def test_multi_turn_with_reasoning_put_back(options):
    messages: list[Any] = [{"role": "user", "content": "first question"}]
    first = litellm.completion(
        model="openai/test", messages=messages, reasoning_effort="low", **options
    )
    assert first.choices[0].message.reasoning_content
    messages += [first.choices[0].message.model_dump(), {"role": "user", "content": "next"}]
    second = litellm.completion(
        model="openai/test", messages=messages, reasoning_effort="low", **options
    )
    assert second.choices[0].message.content == "next"


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_tools_round_trip(options, stream):
    messages: list[Any] = [{"role": "user", "content": "Oslo"}]

    def ask() -> Any:
        reply = litellm.completion(
            model="openai/tool-bot", messages=messages, tools=[WEATHER], stream=stream, **options
        )
        if stream:
            reply = litellm.stream_chunk_builder(list(reply), messages=messages)
        return reply.choices[0].message

    first = ask()
    [call] = first.tool_calls
    city = json.loads(call.function.arguments)["city"]
    messages += [
        first.model_dump(),
        {"role": "tool", "tool_call_id": call.id, "content": f"3 degrees in {city}"},
    ]
    assert ask().content == "The tool said: 3 degrees in Oslo"


def test_structured_output(options):
    reply = litellm.completion(
        model="openai/test",
        messages=[{"role": "user", "content": "Oslo"}],
        response_format=City,
        **options,
    )
    assert City.model_validate_json(reply.choices[0].message.content) == City(
        name="Oslo", population=0
    )


def test_embeddings(options):
    reply = litellm.embedding(model=f"openai/{EMBEDDER}", input=["a cat", "a dog"], **options)
    assert [len(d["embedding"]) for d in reply.data] == [384, 384]


def test_responses_api(options):
    reply = litellm.responses(model="openai/test", input="Hello there", **options)
    assert reply.output[0].content[0].text == "Hello there"
