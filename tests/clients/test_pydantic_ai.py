"""pydantic-ai against `ferrule serve`, as its docs use an OpenAI-compatible server: an
``OpenAIProvider`` with ``base_url`` and ``api_key``, under ``OpenAIChatModel`` (Chat
Completions), ``OpenAIResponsesModel`` and ``OpenAIEmbeddingModel``."""

from __future__ import annotations

import asyncio

import pytest
from client_server import EMBEDDER, Served
from pydantic_ai import Agent, Embedder
from pydantic_ai.embeddings.openai import OpenAIEmbeddingModel
from pydantic_ai.messages import ThinkingPart
from pydantic_ai.models.openai import (
    OpenAIChatModel,
    OpenAIChatModelSettings,
    OpenAIResponsesModel,
)
from pydantic_ai.providers.openai import OpenAIProvider
from shapes import City

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def provider(served: Served) -> OpenAIProvider:
    return OpenAIProvider(base_url=served.openai_base, api_key=served.api_key)


def weather_agent(model) -> Agent:
    agent = Agent(model)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"3 degrees in {city}"

    return agent


def test_chat(provider):
    agent = Agent(OpenAIChatModel("test", provider=provider))
    assert agent.run_sync("Hello there").output == "Hello there"


def test_streaming(provider):
    agent = Agent(OpenAIChatModel("test", provider=provider))

    async def main() -> list[str]:
        async with agent.run_stream("Hello there") as result:
            return [text async for text in result.stream_text(delta=True, debounce_by=None)]

    pieces = asyncio.run(main())
    assert len(pieces) > 1 and "".join(pieces) == "Hello there"


def test_multi_turn_with_reasoning_put_back(provider):
    settings = OpenAIChatModelSettings(openai_reasoning_effort="low")
    agent = Agent(OpenAIChatModel("test", provider=provider), model_settings=settings)
    first = agent.run_sync("first question")
    thinking = [
        p
        for m in first.all_messages()
        for p in getattr(m, "parts", ())
        if isinstance(p, ThinkingPart)
    ]
    assert thinking  # the reasoning came back as a thinking part
    second = agent.run_sync("second question", message_history=first.all_messages())
    assert second.output == "second question"


def test_tools_round_trip(provider):
    agent = weather_agent(OpenAIChatModel("tool-bot", provider=provider))
    assert agent.run_sync("Oslo").output == "The tool said: 3 degrees in Oslo"


def test_streamed_tools_round_trip(provider):
    agent = weather_agent(OpenAIChatModel("tool-bot", provider=provider))

    async def main() -> str:
        async with agent.run_stream("Oslo") as result:
            return await result.get_output()

    assert asyncio.run(main()) == "The tool said: 3 degrees in Oslo"


def test_structured_output(provider):
    # the default output mode: a tool the model must call (tool_choice "required")
    agent = Agent(OpenAIChatModel("test", provider=provider), output_type=City)
    assert agent.run_sync("Oslo").output == City(name="Oslo", population=0)


def test_embeddings(provider):
    embedder = Embedder(OpenAIEmbeddingModel(EMBEDDER, provider=provider))
    result = embedder.embed_documents_sync(["a cat", "a dog"])
    assert [len(v) for v in result.embeddings] == [384, 384]


def test_responses_api(provider):
    agent = weather_agent(OpenAIResponsesModel("tool-bot", provider=provider))
    assert agent.run_sync("Oslo").output == "The tool said: 3 degrees in Oslo"
    assert Agent(OpenAIResponsesModel("test", provider=provider)).run_sync("Hi").output == "Hi"
