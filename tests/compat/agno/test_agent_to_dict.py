"""Agno's ``Agent.to_dict()`` / ``Agent.from_dict(data, registry=None, strict=False)``: the
agent's configuration as data (options not at their default, models as Agno's
``{"name", "id", "provider"}``, tools by name), and an agent built back from it whose runs
speak the same wire (OpenAI's, on the loopback server: `wire`, conftest), its tools' code
found in a `Registry`."""

from __future__ import annotations

import json

import attrs
import pytest
from ferrule.agent import Agent
from ferrule.agent.agent_config import Registry
from ferrule.models.openai import OpenAIChat
from ferrule_kernel import InvalidInputError


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


@attrs.define
class Answer:
    city: str


def configured() -> Agent:
    return Agent(
        model=OpenAIChat(id="gpt-4o"),
        name="Weather Desk",
        instructions=["Answer briefly."],
        markdown=True,
        tool_call_limit=3,
        reasoning_model="openai:gpt-4o-mini",
        tools=[get_weather],
    )


def test_to_dict_writes_what_differs_from_the_defaults_as_json():
    agent = configured()
    data = agent.to_dict()
    agent.delete()
    assert json.loads(json.dumps(data)) == data
    assert data == {
        "model": {"name": "OpenAIChat", "id": "gpt-4o", "provider": "OpenAI"},
        "name": "Weather Desk",
        "instructions": ["Answer briefly."],
        "markdown": True,
        "tool_call_limit": 3,
        "reasoning_model": "openai:gpt-4o-mini",
        "tools": [
            {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
                "requires_confirmation": False,
            }
        ],
    }
    assert Agent(model=OpenAIChat(id="gpt-4o")).to_dict() == {
        "model": {"name": "OpenAIChat", "id": "gpt-4o", "provider": "OpenAI"}
    }


def test_an_agent_built_from_its_dict_runs_as_the_first(wire):
    data = configured().to_dict()
    del data["reasoning_model"]  # one model on the wire
    agent = Agent.from_dict(data, registry=Registry(tools=[get_weather]), strict=True)
    assert isinstance(agent.model, OpenAIChat) and agent.model.id == "gpt-4o"
    assert (agent.name, agent.markdown, agent.tool_call_limit) == ("Weather Desk", True, 3)
    assert agent.to_dict() == data
    wire.calls("get_weather", city="Paris")
    wire.says("Sunny in Paris.")
    output = agent.run("Weather in Paris?")
    agent.delete()
    assert output.content == "Sunny in Paris."
    first, second = wire.bodies
    assert first["model"] == "gpt-4o"
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert second["messages"][-1]["content"] == "Sunny in Paris"


def test_strict_refuses_a_reference_the_registry_lacks():
    data = configured().to_dict()
    with pytest.raises(InvalidInputError) as raised:
        Agent.from_dict(data, strict=True)
    assert raised.value.errors[0]["path"] == "tools"
    lenient = Agent.from_dict(data)  # the tool left out, the rest kept
    assert lenient.tools == [] and lenient.name == "Weather Desk"
    lenient.delete()


def test_schemas_and_live_models_come_from_the_registry():
    live = OpenAIChat(id="gpt-4o", base_url="http://127.0.0.1:9/v1")
    agent = Agent(model=live, output_schema=Answer)
    data = agent.to_dict()
    agent.delete()
    assert data["output_schema"] == "Answer"
    rebuilt = Agent.from_dict(data, registry=Registry(models=[live], schemas=[Answer]))
    assert rebuilt.model is live and rebuilt.output_schema is Answer
    rebuilt.delete()
    with pytest.raises(InvalidInputError) as raised:
        Agent.from_dict(data, registry=Registry(), strict=True)
    assert raised.value.errors[0]["path"] == "output_schema"


def test_bad_input_is_refused_naming_the_field():
    with pytest.raises(InvalidInputError) as raised:
        Agent.from_dict({"name": "x", "no_such_option": 1})
    assert raised.value.errors[0]["path"] == "data.no_such_option"
    with pytest.raises(InvalidInputError) as raised:
        Agent.from_dict({"model": {"provider": "OpenAI"}})
    assert raised.value.errors[0]["path"] == "model"
    with pytest.raises(InvalidInputError) as raised:
        Agent.from_dict({"markdown": "yes"})
    assert raised.value.errors[0]["path"] == "markdown"


def test_the_model_may_be_named_provider_and_id(wire):
    wire.says("Hello.")
    agent = Agent(model="openai:gpt-4o")
    assert isinstance(agent.model, OpenAIChat)
    assert agent.run("Hi").content == "Hello."
    agent.delete()
    assert wire.bodies[0]["model"] == "gpt-4o"
    with pytest.raises(InvalidInputError) as raised:
        Agent(model="gpt-4o")
    assert raised.value.errors[0]["path"] == "model"
