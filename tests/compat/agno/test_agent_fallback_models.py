"""Agno's ``Agent(fallback_models=[...])`` on ferrule's `FallbackModel`, with test models
whose functions fail as providers do (and with Agno's `FallbackConfig`, providers on the loopback
wire): the next model gets the same request on a provider
failure (a rate limit, an overloaded server, an input over the context window), never on a
client error (a bad key, a bad request), and the option is checked."""

from __future__ import annotations

import pytest
from ferrule import Runtime
from ferrule.agent import Agent, FallbackModel
from ferrule.models.anthropic import Claude
from ferrule.models.fallback import FallbackConfig
from ferrule.models.openai import OpenAIChat
from ferrule.models.xai import xAI
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    ModelError,
    ProviderBadRequestError,
    ProviderUnavailableError,
    RateLimitError,
)
from ferrule_kit.testing.loopback import Reply
from ferrule_testmodel import TestModel

from .failing import Failing

RATE_LIMITED = RateLimitError("busy", provider="p", status=429)


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
        output = agent.run("Hi")
    assert output.status == "error" and type(output.error) is type(error)
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


def _openai_error(status: int, message: str, code: str | None = None) -> Reply:
    return Reply.json({"error": {"message": message, "type": "error", "code": code}}, status)


@pytest.mark.parametrize(
    ("failure", "answering"),
    [
        (_openai_error(429, "slow down", "rate_limit_exceeded"), "claude-haiku-4-5"),
        (
            _openai_error(
                400, "This model's maximum context length is 8192 tokens", "context_length_exceeded"
            ),
            "gemini-2.5-pro",
        ),
        (_openai_error(503, "overloaded"), "grok-4"),
    ],
    ids=["rate limit", "context overflow", "other failure"],
)
def test_fallback_config_sends_each_kind_of_failure_to_its_own_models(wire, failure, answering):
    switches = []
    config = FallbackConfig(
        on_rate_limit=[Claude(id="claude-haiku-4-5")],
        on_context_overflow=["gemini:gemini-2.5-pro"],  # a name, made a model
        on_error=[xAI(id="grok-4")],
        callback=lambda primary, fallback, error: switches.append((primary, fallback, error)),
    )
    wire.replies(failure)
    wire.says("answered")
    with Agent(model=OpenAIChat(id="gpt-4o", max_retries=0), fallback_config=config) as agent:
        assert agent.fallback_config is config
        assert agent.run("Hi").content == "answered"
    assert [type(m).__name__ for m in config.on_context_overflow] == ["Gemini"]
    assert [(p, f) for p, f, _ in switches] == [("gpt-4o", answering)]
    assert isinstance(switches[0][2], ModelError)


def test_a_client_error_of_the_primary_goes_nowhere_but_a_fallbacks_goes_to_the_next(wire):
    config = FallbackConfig(on_error=[Claude(id="claude-haiku-4-5"), xAI(id="grok-4")])
    with Agent(model=OpenAIChat(id="gpt-4o", max_retries=0), fallback_config=config) as agent:
        wire.replies(_openai_error(401, "bad key", "invalid_api_key"))
        assert isinstance(agent.run("Hi").error, AuthenticationError)
        assert len(wire.requests) == 1
        # the primary is down; the first fallback's key is refused: the next one answers
        wire.replies(_openai_error(503, "overloaded"))
        wire.replies(Reply.json({"type": "error", "error": {"type": "x", "message": "k"}}, 401))
        wire.says("from grok")
        assert agent.run("Hi").content == "from grok"


def test_the_callback_hears_once_a_streamed_fallback_has_finished_and_its_failure_is_not_the_runs(
    wire,
):
    heard = []

    def callback(primary: str, fallback: str, error: Exception) -> None:
        heard.append((primary, fallback))
        raise RuntimeError("the host's own bug")

    config = FallbackConfig(on_error=[Claude(id="claude-haiku-4-5")], callback=callback)
    wire.replies(_openai_error(503, "overloaded"))
    wire.says("streamed")
    with Agent(model=OpenAIChat(id="gpt-4o", max_retries=0), fallback_config=config) as agent:
        chunks = [e.content for e in agent.run("Hi", stream=True) if e.event == "RunContent"]
    assert "".join(c for c in chunks if c) == "streamed"
    assert heard == [("gpt-4o", "claude-haiku-4-5")]


def test_fallback_config_wins_over_fallback_models_and_bad_ones_are_named(rt):
    first, configured, listed = Failing("first", [RATE_LIMITED]), Failing("c", []), Failing("l", [])
    with Agent(
        rt,
        model=TestModel(function=first),
        fallback_models=[TestModel(function=listed)],
        fallback_config=FallbackConfig(on_rate_limit=[TestModel(function=configured)]),
    ) as agent:
        assert agent.run("Hi").content == "c"
    assert listed.requests == 0
    with pytest.raises(InvalidInputError) as caught:
        Agent(
            rt,
            model=TestModel(["x"]),
            fallback_config=FallbackConfig(on_error=[TestModel(["y"]), 7]),
        )
    assert caught.value.errors[0]["path"] == "fallback_config.on_error[1]"
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, model=TestModel(["x"]), fallback_config={"on_error": []})
    assert caught.value.errors[0]["path"] == "fallback_config"
