"""Agno's ``Agent(fallback_models=[...])`` on ferrule's `FallbackModel`, with test models
whose functions fail as providers do: the next model gets the same request on a provider
failure (a rate limit, an overloaded server, an input over the context window), never on a
client error (a bad key, a bad request), and the option is checked."""

from __future__ import annotations

import pytest
from ferrule import Runtime
from ferrule.agent import Agent, FallbackModel
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    ProviderBadRequestError,
    ProviderUnavailableError,
    RateLimitError,
)
from ferrule_testmodel import TestModel

from .failing import Failing


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


@pytest.mark.parametrize(
    "error",
    [
        RateLimitError("busy", provider="p", status=429),
        ProviderUnavailableError("overloaded", provider="p", status=529),
        ContextWindowExceededError("too long", provider="p"),
    ],
    ids=lambda e: e.kind,
)
def test_a_provider_failure_goes_to_the_fallbacks_in_order(rt, error):
    first, second = Failing("first", [error]), Failing("second", [error])
    third = Failing("third", [])
    with Agent(
        rt,
        model=TestModel(function=first),
        fallback_models=[TestModel(function=second), TestModel(function=third)],
    ) as agent:
        assert isinstance(agent.model, FallbackModel)
        assert agent.run("Hi").content == "third"
    assert (first.requests, second.requests, third.requests) == (1, 1, 1)


@pytest.mark.parametrize(
    "error",
    [
        AuthenticationError("bad key", provider="p", status=401),
        ProviderBadRequestError("bad request", provider="p", status=400),
    ],
    ids=lambda e: e.kind,
)
def test_a_client_error_does_not_fall_back(rt, error):
    first, second = Failing("first", [error]), Failing("second", [])
    with Agent(
        rt, model=TestModel(function=first), fallback_models=[TestModel(function=second)]
    ) as agent:
        with pytest.raises(type(error)):
            agent.run("Hi")
    assert second.requests == 0


def test_bad_fallback_models_are_refused_naming_the_option(rt):
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=TestModel(["x"]), fallback_models="openai:gpt-4o")
    assert caught.value.errors[0]["path"] == "fallback_models"
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=TestModel(["x"]), fallback_models=["gpt-4o"])  # no provider
    assert "provider:model_id" in str(caught.value)
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=TestModel(["x"]), fallback_models=[TestModel(["y"]), 42])
    assert caught.value.errors[0]["path"] == "fallback_models[1]"
    both = FallbackModel(TestModel(["a"]), TestModel(["b"]))
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=both, fallback_models=[TestModel(["c"])])
    assert caught.value.errors[0]["path"] == "fallback_models"


def test_a_fallback_named_provider_colon_model_is_that_providers_model(rt, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # read only when it is first asked
    with Agent(rt, model=TestModel(["x"]), fallback_models=["openai:gpt-4o"]) as agent:
        _, second = agent.model.models
        assert type(second).__name__ == "OpenAIChat" and second.id == "gpt-4o"
        assert agent.run("Hi").content == "x"  # the first model answered: no request out


def test_telemetry_is_never_sent_so_only_false_is_taken(rt):
    with Agent(rt, model=TestModel(["x"]), telemetry=False) as agent:
        assert agent.telemetry is False
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=TestModel(["x"]), telemetry=True)
    assert caught.value.errors[0]["path"] == "telemetry"
    assert "sends no telemetry" in str(caught.value)
