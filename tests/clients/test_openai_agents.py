"""The OpenAI Agents SDK against `ferrule serve`, as its docs use another provider: an
``AsyncOpenAI`` client with ``base_url`` under ``OpenAIResponsesModel`` (its default
API) and ``OpenAIChatCompletionsModel``; tracing off (it would upload to OpenAI)."""

from __future__ import annotations

import asyncio

import pytest
from agents import (
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from client_server import Served
from openai import AsyncOpenAI
from openai.types.shared import Reasoning
from shapes import City

pytestmark = pytest.mark.timeout(120)

set_tracing_disabled(True)


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"3 degrees in {city}"


@pytest.fixture(scope="module", params=["responses", "chat_completions"])
def model_of(served: Served, request: pytest.FixtureRequest):
    kind = OpenAIResponsesModel if request.param == "responses" else OpenAIChatCompletionsModel

    def model(name: str):  # a client per model: each run may have its own event loop
        client = AsyncOpenAI(base_url=served.openai_base, api_key=served.api_key, max_retries=0)
        return kind(model=name, openai_client=client)

    return model


def test_chat(model_of):
    agent = Agent(name="echo", instructions="Repeat.", model=model_of("test"))
    assert Runner.run_sync(agent, "Hello there").final_output == "Hello there"


def test_streaming(model_of):
    agent = Agent(name="echo", instructions="Repeat.", model=model_of("test"))

    async def main() -> list[str]:
        result = Runner.run_streamed(agent, "Hello there")
        return [
            e.data.delta
            async for e in result.stream_events()
            if e.type == "raw_response_event"
            and getattr(e.data, "type", None) == "response.output_text.delta"
        ]

    pieces = asyncio.run(main())
    assert len(pieces) > 1 and "".join(pieces) == "Hello there"


def test_multi_turn_with_reasoning_put_back(model_of):
    settings = ModelSettings(reasoning=Reasoning(effort="low"))
    agent = Agent(name="echo", model=model_of("test"), model_settings=settings)
    first = Runner.run_sync(agent, "first question")
    history = [*first.to_input_list(), {"role": "user", "content": "second question"}]
    assert Runner.run_sync(agent, history).final_output == "second question"


def test_tools_round_trip(model_of):
    agent = Agent(name="weather", model=model_of("tool-bot"), tools=[get_weather])
    assert Runner.run_sync(agent, "Oslo").final_output == "The tool said: 3 degrees in Oslo"


def test_streamed_tools_round_trip(model_of):
    agent = Agent(name="weather", model=model_of("tool-bot"), tools=[get_weather])

    async def main() -> str:
        result = Runner.run_streamed(agent, "Oslo")
        async for _ in result.stream_events():
            pass
        return result.final_output

    assert asyncio.run(main()) == "The tool said: 3 degrees in Oslo"


def test_structured_output(model_of):
    agent = Agent(name="cities", model=model_of("test"), output_type=City)
    assert Runner.run_sync(agent, "Oslo").final_output == City(name="Oslo", population=0)
