"""What the typed public surface does at run time: a `@tool` function is still the
function (and a tool the agent runs), and a TypedDict is an ``output_schema`` as an attrs
class is. The static side (mypy and pyright on user-style programs) is tests/test_typing.py."""

from __future__ import annotations

import asyncio
from typing import TypedDict

import pytest
from ferrule import Agent, Runtime, Tool, tool
from ferrule.agent import OutputValidationError
from ferrule.tools import FunctionTool
from ferrule_kernel import json_schema
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


@tool
def add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b


@tool(requires_confirmation=True, name="shout")
async def shout_it(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def test_a_decorated_function_is_still_the_function():
    assert add(2, 3) == 5 and add(a=4) == 5
    assert asyncio.run(shout_it("hi")) == "HI"
    assert isinstance(add, FunctionTool) and isinstance(add, Tool)
    assert (add.name, shout_it.name, shout_it.requires_confirmation) == ("add", "shout", True)
    assert add.function.__name__ == "add"
    assert Tool.from_function(lambda x: x * 2, name="double")(21) == 42


def test_the_agent_runs_a_decorated_function_as_a_tool(rt):
    script = [{"tool_calls": [{"name": "add", "arguments": {"a": 20, "b": 22}}]}, "It is 42."]
    with Agent(rt, TestModel(script), tools=[add]) as agent:
        output = agent.run("20 + 22?")
    assert output.content == "It is 42."
    assert [m.content for m in output.messages if m.role == "tool"] == ["42"]


class City(TypedDict):
    name: str
    population: int


def test_a_typeddict_output_schema_gives_a_validated_dict(rt):
    city = {"name": "Oslo", "population": 709000}
    with Agent(rt, TestModel([{"output": city}]), output_schema=City) as agent:
        output = agent.run("The capital of Norway?")
        sent = agent.runtime.kernel.component(agent._component).requests[0].output_schema
    assert output.content == city and output.content_type == "City"
    assert sent == json_schema(City)
    assert sent["required"] == ["name", "population"]


def test_a_reply_that_does_not_match_the_typeddict_is_an_output_validation_error(rt):
    wrong = {"name": "Oslo", "population": "many"}
    with Agent(rt, TestModel([{"output": wrong}]), output_schema=City, output_retries=0) as agent:
        output = agent.run("The capital of Norway?")
    assert isinstance(output.error, OutputValidationError)
    assert "$.population" in output.error.message
