"""agno against `ferrule serve`, as its docs use an OpenAI-compatible server: ``OpenAIChat``
and ``OpenAIResponses`` with ``base_url`` and ``api_key``, ``OpenAIEmbedder`` likewise;
conversations kept by the agent's own database."""

from __future__ import annotations

import pytest
from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.knowledge.embedder.openai import OpenAIEmbedder
from agno.models.openai import OpenAIChat, OpenAIResponses
from client_server import EMBEDDER, Served
from shapes import City

pytestmark = pytest.mark.timeout(120)


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city
    """
    return f"3 degrees in {city}"


@pytest.fixture(scope="module")
def chat(served: Served):
    def model(name: str, **options) -> OpenAIChat:
        return OpenAIChat(
            id=name, base_url=served.openai_base, api_key=served.api_key, max_retries=0, **options
        )

    return model


def test_chat(chat):
    assert Agent(model=chat("test")).run("Hello there").content == "Hello there"


def test_streaming(chat):
    pieces = [e.content for e in Agent(model=chat("test")).run("Hello there", stream=True)]
    pieces = [p for p in pieces if p]
    assert len(pieces) > 1 and "".join(pieces) == "Hello there"


def test_multi_turn_with_reasoning_put_back(chat):
    agent = Agent(
        model=chat("test", reasoning_effort="low"), db=InMemoryDb(), add_history_to_context=True
    )
    first = agent.run("first question", session_id="s1")
    assert first.reasoning_content
    second = agent.run("second question", session_id="s1")
    assert second.content == "second question"
    sent = [m.role for m in second.messages]
    assert sent.count("user") == 2 and "assistant" in sent  # the first turn went back


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_tools_round_trip(chat, stream):
    agent = Agent(model=chat("tool-bot"), tools=[get_weather])
    if stream:
        events = list(agent.run("Oslo", stream=True))
        text = "".join(e.content for e in events if e.event == "RunContent" and e.content)
    else:
        text = agent.run("Oslo").content
    assert text == "The tool said: 3 degrees in Oslo"


def test_structured_output(chat):
    result = Agent(model=chat("test"), output_schema=City).run("Oslo")
    assert result.content == City(name="Oslo", population=0)


def test_embeddings(served):
    # agno sends dimensions when set: the model's own size is accepted
    embedder = OpenAIEmbedder(
        id=EMBEDDER, dimensions=384, base_url=served.openai_base, api_key=served.api_key
    )
    assert len(embedder.get_embedding("a cat")) == 384


def test_responses_api(served):
    model = OpenAIResponses(id="tool-bot", base_url=served.openai_base, api_key=served.api_key)
    agent = Agent(model=model, tools=[get_weather])
    assert agent.run("Oslo").content == "The tool said: 3 degrees in Oslo"
