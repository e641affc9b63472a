"""Agno's tool-result compression on ferrule's turn loop: ``Agent(compress_tool_results=True)``
or ``Agent(compression_manager=CompressionManager(...))`` (``ferrule.compression``), the
compression model's requests, what the main model reads afterwards, the run's own
messages, and `CompressionStartedEvent` / `CompressionCompletedEvent`. Every model is
OpenAI's wire on the loopback server (`wire`: conftest); the compression model answers
each request from the tool result it was sent, since the requests go out together."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ferrule.agent import Agent
from ferrule.compression import CompressionManager
from ferrule.compression.manager import DEFAULT_COMPRESSION_PROMPT
from ferrule.models.message import Message as AgnoMessage
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import CompressionCompletedEvent, CompressionStartedEvent
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import OPENAI
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import RecordedRequest, Reply

CITIES = ("Paris", "Rome", "Oslo")


def weather_report(city: str) -> str:
    """The long weather report of a city."""
    return (
        f"According to the regional weather service, the report for {city} today says that "
        f"the temperature will reach 21 degrees in the afternoon, with light winds from the "
        f"west at 12 km/h, and that the chance of rain stays below 10 percent all day. "
        f"Visitors to {city} are advised that the evening will be cooler."
    )


def short(city: str) -> str:
    return f"{city}: 21C, wind W 12 km/h, rain <10%"


def compression_reply(request: RecordedRequest) -> Reply:
    """The compression model's answer: the short form of the city its request names."""
    sent = request.json["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else "".join(p.get("text", "") for p in sent)
    city = next(c for c in CITIES if f"report for {c}" in text)
    return reply(OPENAI, short(city))


def texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content)
    return content or ""


def requests_of(wire: Any, model: str) -> list[dict[str, Any]]:
    return [body for body in wire.bodies if body["model"] == model]


def test_three_tool_results_are_compressed_before_the_next_request(wire):
    manager = CompressionManager(model=OpenAIChat(id="gpt-4o-mini"))
    wire.calls_many(*(("weather_report", {"city": c}) for c in CITIES))
    wire.replies(compression_reply, compression_reply, compression_reply)
    wire.says("Mild everywhere.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"), tools=[weather_report], compression_manager=manager
    )
    assert agent.compress_tool_results is True  # the manager turns it on, as Agno's does
    events = list(agent.run("Weather in Paris, Rome, Oslo?", stream=True, stream_events=True))
    agent.delete()

    kinds = [e.event for e in events if e.event != "RunContent"]
    at = kinds.index("CompressionStarted")
    assert kinds[at - 3 : at] == ["ToolCallCompleted"] * 3
    assert kinds[at + 1 : at + 3] == ["CompressionCompleted", "ModelRequestStarted"]
    done = next(e for e in events if isinstance(e, CompressionCompletedEvent))
    started = next(e for e in events if isinstance(e, CompressionStartedEvent))
    assert started.run_id == done.run_id == events[-1].run_id and done.agent_id == agent.id
    originals = [weather_report(c) for c in CITIES]
    assert done.tool_results_compressed == 3
    assert done.original_size == sum(len(t) for t in originals)
    assert done.compressed_size == sum(len(short(c)) for c in CITIES)
    assert manager.stats == {
        "tool_results_compressed": 3,
        "original_size": done.original_size,
        "compressed_size": done.compressed_size,
    }

    # each result went to the compression model alone, under its instructions
    asked = requests_of(wire, "gpt-4o-mini")
    assert len(asked) == 3
    for body in asked:
        system, user = body["messages"]
        assert system["role"] == "system" and texts(system) == DEFAULT_COMPRESSION_PROMPT
        assert user["role"] == "user"
        assert "tools" not in body
    sent = sorted(texts(body["messages"][1]) for body in asked)
    assert sent == sorted(
        f"Tool Results to Compress: Tool: weather_report\n{t}\n" for t in originals
    )

    # the main model's second request reads the compressed results in their place
    main = requests_of(wire, "gpt-4o")
    assert len(main) == 2
    results = [texts(m) for m in main[-1]["messages"] if m["role"] == "tool"]
    assert results == [short(c) for c in CITIES]
    assert "regional weather service" not in json.dumps(main[-1])

    # the run's own messages keep what the tools returned
    output = events[-1]
    assert output.content == "Mild everywhere."


def test_the_run_output_keeps_the_original_results(wire):
    manager = CompressionManager(model=OpenAIChat(id="gpt-4o-mini"), compress_tool_results_limit=1)
    wire.calls("weather_report", city="Rome")
    wire.replies(compression_reply)
    wire.says("Mild.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"), tools=[weather_report], compression_manager=manager
    )
    output = agent.run("Weather in Rome?")
    agent.delete()
    tool_messages = [m for m in output.messages if m.role == "tool"]
    assert [m.content for m in tool_messages] == [weather_report("Rome")]
    assert [texts(m) for m in wire.last["messages"] if m["role"] == "tool"] == [short("Rome")]


def test_below_the_limit_nothing_is_compressed(wire):
    manager = CompressionManager(model=OpenAIChat(id="gpt-4o-mini"))  # 3 results by default
    wire.calls("weather_report", city="Oslo")
    wire.says("Mild.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"), tools=[weather_report], compression_manager=manager
    )
    events = list(agent.run("Weather in Oslo?", stream=True, stream_events=True))
    agent.delete()
    assert not [e for e in events if e.event.startswith("Compression")]
    assert requests_of(wire, "gpt-4o-mini") == [] and manager.stats == {}
    assert weather_report("Oslo") in json.dumps(wire.last)


def test_compress_tool_results_alone_compresses_with_the_agents_own_model(wire):
    wire.calls_many(*(("weather_report", {"city": c}) for c in CITIES))
    wire.replies(compression_reply, compression_reply, compression_reply)
    wire.says("Mild everywhere.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[weather_report], compress_tool_results=True)
    manager = agent.compression_manager
    assert isinstance(manager, CompressionManager)
    assert manager.compress_tool_results_limit == 3 and manager.model is None
    output = agent.run("Weather in Paris, Rome, Oslo?")
    agent.delete()
    assert output.content == "Mild everywhere."
    bodies = wire.bodies
    assert len(bodies) == 5 and {b["model"] for b in bodies} == {"gpt-4o"}
    assert all(texts(b["messages"][0]) == DEFAULT_COMPRESSION_PROMPT for b in bodies[1:4])
    assert manager.stats["tool_results_compressed"] == 3


def test_a_token_limit_compresses_a_long_request(wire):
    manager = CompressionManager(
        model=OpenAIChat(id="gpt-4o-mini"),
        compress_token_limit=50,
        compress_tool_call_instructions="Keep the temperature only.",
    )
    assert manager.compress_tool_results_limit is None  # a token limit alone
    wire.calls("weather_report", city="Paris")
    wire.replies(compression_reply)
    wire.says("21C.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"), tools=[weather_report], compression_manager=manager
    )
    agent.run("Weather in Paris?")
    agent.delete()
    (asked,) = requests_of(wire, "gpt-4o-mini")
    assert texts(asked["messages"][0]) == "Keep the temperature only."
    assert [texts(m) for m in wire.last["messages"] if m["role"] == "tool"] == [short("Paris")]


def test_a_failed_compression_sends_the_result_as_it_is_and_is_not_retried(wire):
    manager = CompressionManager(model=OpenAIChat(id="gpt-4o-mini"), compress_tool_results_limit=1)
    refused = Reply.json({"error": {"message": "no", "type": "invalid_request_error"}}, 400)
    wire.calls("weather_report", city="Oslo")
    wire.replies(refused)
    wire.calls("weather_report", city="Rome")
    wire.replies(compression_reply)
    wire.says("Mild.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"), tools=[weather_report], compression_manager=manager
    )
    output = agent.run("Weather in Oslo and Rome?")
    agent.delete()
    assert output.content == "Mild."
    # Oslo's compression failed once: sent whole, and only Rome's was asked next time
    assert len(requests_of(wire, "gpt-4o-mini")) == 2
    last_results = [texts(m) for m in wire.last["messages"] if m["role"] == "tool"]
    assert last_results == [weather_report("Oslo"), short("Rome")]
    assert manager.stats["tool_results_compressed"] == 1


def test_the_manager_compresses_agno_messages_itself(wire):
    wire.replies(compression_reply)
    manager = CompressionManager(model=OpenAIChat(id="gpt-4o-mini"), compress_tool_results_limit=1)
    messages = [
        AgnoMessage(role="user", content="Weather in Oslo?"),
        AgnoMessage(
            role="tool", content=weather_report("Oslo"), tool_call_id="c1", tool_name="weather"
        ),
    ]
    assert manager.should_compress(messages) is True
    manager.compress(messages)
    assert messages[1].compressed_content == short("Oslo")
    assert messages[1].get_content(use_compressed_content=True) == short("Oslo")
    assert manager.should_compress(messages) is False  # nothing left to compress
    (asked,) = wire.bodies
    assert texts(asked["messages"][1]).startswith("Tool Results to Compress: Tool: weather\n")


def test_bad_settings_are_refused_naming_the_field():
    with pytest.raises(InvalidInputError) as caught:
        CompressionManager(compress_tool_results_limit=0)
    assert caught.value.errors[0]["path"] == "compress_tool_results_limit"
    with pytest.raises(InvalidInputError) as caught:
        CompressionManager(compress_tool_call_instructions=["shorter"])  # type: ignore[arg-type]
    assert caught.value.errors[0]["path"] == "compress_tool_call_instructions"
    with pytest.raises(InvalidInputError) as caught:
        Agent(model=OpenAIChat(id="gpt-4o"), compression_manager={"limit": 3})
    assert caught.value.errors[0]["path"] == "compression_manager"
    with pytest.raises(InvalidInputError) as caught:
        CompressionManager().compress([AgnoMessage(role="tool", content="x", tool_call_id="c")])
    assert caught.value.errors[0]["path"] == "model"


def test_a_manager_switched_off_compresses_nothing(wire):
    manager = CompressionManager(
        model=OpenAIChat(id="gpt-4o-mini"),
        compress_tool_results=False,
        compress_tool_results_limit=1,
    )
    wire.calls("weather_report", city="Oslo")
    wire.says("Mild.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"), tools=[weather_report], compression_manager=manager
    )
    assert agent.compress_tool_results is False
    agent.run("Weather in Oslo?")
    agent.delete()
    assert requests_of(wire, "gpt-4o-mini") == []


def test_a_models_own_response_compresses_with_the_manager_it_is_given(wire):
    manager = CompressionManager(model=OpenAIChat(id="gpt-4o-mini"), compress_tool_results_limit=1)
    wire.calls("weather_report", city="Oslo")
    wire.replies(compression_reply)
    wire.says("Mild.")
    response = OpenAIChat(id="gpt-4o").response(
        messages=[AgnoMessage(role="user", content="Weather in Oslo?")],
        tools=[weather_report],
        compression_manager=manager,
    )
    assert response.content == "Mild."
    assert [texts(m) for m in wire.last["messages"] if m["role"] == "tool"] == [short("Oslo")]
    assert manager.stats["tool_results_compressed"] == 1
