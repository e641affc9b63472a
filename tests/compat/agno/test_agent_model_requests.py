"""Agno's options of the model requests on ferrule's turn loop: ``retries`` /
``delay_between_retries`` / ``exponential_backoff`` (a failed model request tried again,
with test models whose function fails as providers do), ``tool_choice`` (sent with the
tools on OpenAI's wire, on the loopback server: `wire`, conftest) and
``structured_outputs`` (the provider's own structured output even with
``use_json_mode``)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.agent.model_requests import RetryPolicy
from ferrule.models.anthropic import Claude
from ferrule.models.openai import OpenAIChat
from ferrule.tools import tool
from ferrule_kernel import FerruleError, InvalidInputError
from ferrule_kit.errors import ProviderUnavailableError, RateLimitError
from ferrule_testmodel import TestModel

from .failing import Failing


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def busy() -> FerruleError:
    return ProviderUnavailableError("overloaded", provider="p", status=529)


def test_a_failed_model_request_is_tried_again(rt):
    model = Failing("Hello!", [busy(), RateLimitError("slow down", provider="p", status=429)])
    with Agent(rt, model=TestModel(function=model), retries=2, delay_between_retries=0) as agent:
        output = agent.run("Hi")
    assert output.content == "Hello!" and output.status == "completed"
    assert model.requests == 3


def test_without_retries_the_first_failure_ends_the_run(rt):
    model = Failing("Hello!", [busy()])
    with Agent(rt, model=TestModel(function=model)) as agent:
        assert agent.retries == 0 and agent.delay_between_retries == 1
        assert agent.exponential_backoff is False
        output = agent.run("Hi")
    assert output.status == "error" and isinstance(output.error, ProviderUnavailableError)
    assert model.requests == 1


def test_retries_count_per_run_and_the_last_failure_ends_it(rt):
    model = Failing("never", [busy(), busy(), busy()])
    with Agent(rt, model=TestModel(function=model), retries=1, delay_between_retries=0) as agent:
        failed = agent.run("Hi")  # the retries come before the error status, as Agno's
        assert failed.status == "error" and isinstance(failed.error, ProviderUnavailableError)
        assert model.requests == 2  # one attempt and one retry
        model.errors = [busy()]
        assert agent.run("Hi again").content == "never"  # a new run has its retries again


def test_retries_cover_every_request_of_a_run_together(rt):
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    turns: list[Any] = [busy(), {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}]
    turns += [busy(), "3"]

    def function(inputs: Any) -> Any:
        turn = turns.pop(0)
        if isinstance(turn, FerruleError):
            raise turn
        return turn

    with Agent(
        rt, model=TestModel(function=function), tools=[add], retries=2, delay_between_retries=0
    ) as agent:
        output = agent.run("1 + 2?")
    assert output.content == "3" and not turns


def test_a_refused_request_is_not_sent_again(rt):
    model = Failing("x", [InvalidInputError("bad", field="messages")])
    with Agent(rt, model=TestModel(function=model), retries=3, delay_between_retries=0) as agent:
        with pytest.raises(InvalidInputError):
            agent.run("Hi")
    assert model.requests == 1


def test_the_delay_doubles_with_exponential_backoff():
    plain = RetryPolicy(retries=3, delay=2, exponential_backoff=False)
    doubling = attrs.evolve(plain, exponential_backoff=True)
    assert [plain.delay_after(n) for n in (1, 2, 3)] == [2, 2, 2]
    assert [doubling.delay_after(n) for n in (1, 2, 3)] == [2, 4, 8]


def test_bad_retry_settings_are_refused_naming_the_option(rt):
    for option, value in (
        ("retries", -1),
        ("retries", "2"),
        ("delay_between_retries", -1),
        ("delay_between_retries", "1s"),
        ("exponential_backoff", "yes"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            Agent(rt, model=TestModel(["x"]), **{option: value})
        assert caught.value.errors[0]["path"] == option


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def test_tool_choice_none_is_sent_with_the_tools(wire):
    wire.says("I will not look it up.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[get_weather], tool_choice="none")
    assert agent.run("Weather in Paris?").content == "I will not look it up."
    agent.delete()
    assert wire.last["tool_choice"] == "none" and wire.last["tools"]


def test_a_named_tool_choice_forces_that_call_then_lets_the_model_answer(wire):
    wire.calls("get_weather", city="Paris")
    wire.says("It is sunny in Paris.")
    choice = {"type": "function", "function": {"name": "get_weather"}}
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[get_weather], tool_choice=choice)
    output = agent.run("Paris?")
    agent.delete()
    assert output.content == "It is sunny in Paris."
    first, second = wire.bodies
    assert first["tool_choice"] == choice
    assert second.get("tool_choice", "auto") == "auto"  # the call was made: the model answers


@pytest.mark.parametrize(
    ("model", "choice", "sent"),
    [
        (
            lambda: OpenAIChat(id="gpt-4o"),
            {"type": "function", "name": "get_weather"},  # as Agno's cookbook writes it
            {"type": "function", "function": {"name": "get_weather"}},
        ),
        (
            lambda: Claude(id="claude-sonnet-4-5"),
            {"type": "tool", "name": "get_weather"},
            {"type": "tool", "name": "get_weather"},
        ),
        (
            lambda: Claude(id="claude-sonnet-4-5"),
            {"type": "function", "function": {"name": "get_weather"}},
            {"type": "tool", "name": "get_weather"},
        ),
    ],
    ids=["responses shape to chat", "anthropic shape", "chat shape to anthropic"],
)
def test_a_named_tool_choice_in_any_providers_shape_reaches_each_wire_in_its_own(
    wire, model, choice, sent
):
    wire.calls("get_weather", city="Oslo")
    wire.says("Sunny.")
    with Agent(model=model(), tools=[get_weather], tool_choice=choice) as agent:
        assert agent.tool_choice == choice  # kept as given
        assert agent.run("Weather in Oslo?").content == "Sunny."
    assert wire.bodies[0]["tool_choice"] == sent


def test_tool_choice_auto_and_no_tools_send_no_choice(wire):
    wire.says("Hello.", "Hi.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[get_weather], tool_choice="auto")
    agent.run("Hi")
    no_tools = Agent(model=OpenAIChat(id="gpt-4o"), tool_choice="none")
    no_tools.run("Hi")
    agent.delete()
    no_tools.delete()
    assert "tool_choice" not in wire.bodies[0] and "tool_choice" not in wire.bodies[1]


def test_a_tool_choice_naming_an_unknown_tool_is_refused(wire):
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        tools=[get_weather],
        tool_choice={"type": "function", "function": {"name": "get_time"}},
    )
    with pytest.raises(InvalidInputError) as caught:
        agent.run("Hi")
    agent.delete()
    assert "get_time" in str(caught.value)
    for bad in ("sometimes", {"type": "function"}, 3):
        with pytest.raises(InvalidInputError) as refused:
            Agent(model=OpenAIChat(id="gpt-4o"), tool_choice=bad)
        assert refused.value.errors[0]["path"] == "tool_choice"


@attrs.define
class City:
    name: str
    country: str


def test_structured_outputs_wins_over_json_mode(wire):
    wire.says('{"name": "Braga", "country": "Portugal"}', '{"name": "Faro", "country": "Portugal"}')
    structured = Agent(
        model=OpenAIChat(id="gpt-4o"),
        output_schema=City,
        use_json_mode=True,
        structured_outputs=True,
    )
    assert structured.run("A city?").content == City("Braga", "Portugal")
    assert wire.last["response_format"]["type"] == "json_schema"
    assert all(m["role"] != "system" for m in wire.last["messages"])  # the schema is sent
    json_mode = Agent(
        model=OpenAIChat(id="gpt-4o"),
        output_schema=City,
        use_json_mode=True,
        structured_outputs=False,
    )
    assert json_mode.run("A city?").content == City("Faro", "Portugal")
    assert wire.last["response_format"] == {"type": "json_object"}
    structured.delete()
    json_mode.delete()
    with pytest.raises(InvalidInputError) as caught:
        Agent(model=OpenAIChat(id="gpt-4o"), structured_outputs="yes")
    assert caught.value.errors[0]["path"] == "structured_outputs"
