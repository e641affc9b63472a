"""The agent features pydantic-ai users rely on, on the deterministic test model: a
`FallbackModel` (models tried in order on provider failure, never after output was
streamed), `ModelRetry` from a tool (bounded by the tool's ``retries``), `UsageLimits`
per run, and dependency injection into tools (``deps`` through ``ToolContext[Deps]``)."""

from __future__ import annotations

import asyncio

import attrs
import pytest
from ferrule import (
    Agent,
    AsyncRuntime,
    FallbackModel,
    LangModel,
    ModelRetry,
    Runtime,
    ToolContext,
    UsageLimitExceeded,
    UsageLimits,
    tool,
)
from ferrule.agent import FallbackModelsFailedError
from ferrule.tools import Tool, ToolRetriesExceededError
from ferrule_kernel import FerruleError, InvalidInputError
from ferrule_kit.errors import (
    AuthenticationError,
    InvalidToolCallError,
    ModelError,
    ProviderConnectionError,
    ProviderUnavailableError,
    QuotaExceededError,
    RateLimitError,
)
from ferrule_kit.models.lm import InferInput
from ferrule_testmodel import TestModel

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


class Recorder:
    """A test model's function: records each request, then fails with ``errors`` (one per
    request, None: answer) and answers with ``reply``."""

    def __init__(self, reply: str = "ok", errors: list[FerruleError | None] | None = None):
        self.reply = reply
        self.errors = list(errors or [])
        self.requests: list[InferInput] = []

    def __call__(self, inputs: InferInput) -> str:
        self.requests.append(inputs)
        if self.errors:
            error = self.errors.pop(0)
            if error is not None:
                raise error
        return self.reply


def components(rt: Runtime) -> set[str]:
    return set(rt.kernel.components())


# -- FallbackModel ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        RateLimitError("too many requests", provider="p", status=429),
        QuotaExceededError("out of credit", provider="p", status=429),
        ProviderUnavailableError("overloaded", provider="p", status=529),
        ProviderConnectionError("connection refused", provider="p", status=None),
        AuthenticationError("bad key", provider="p", status=401),
        ModelError("a local backend failed", provider="local"),
    ],
    ids=lambda e: e.kind,
)
def test_a_provider_failure_falls_back_to_the_next_model(rt, error):
    first, second = Recorder(errors=[error]), Recorder("from the fallback")
    with Agent(rt, FallbackModel(TestModel(function=first), TestModel(function=second))) as agent:
        output = agent.run("Hi")
    assert output.content == "from the fallback"
    assert len(first.requests) == len(second.requests) == 1
    assert second.requests[0].messages[-1].text == "Hi"  # the same request, again


def test_every_request_starts_from_the_first_model(rt):
    first = Recorder("first answers", errors=[RateLimitError("busy", provider="p"), None])
    second = Recorder("second answers")
    model = FallbackModel(TestModel(function=first), TestModel(function=second))
    with Agent(rt, model) as agent:
        assert agent.run("one").content == "second answers"
        assert agent.run("two").content == "first answers"
    assert [r.messages[-1].text for r in first.requests] == ["one", "two"]
    assert [r.messages[-1].text for r in second.requests] == ["one"]


@pytest.mark.parametrize(
    "error",
    [
        InvalidInputError("bad input", field="$.messages[0]"),
        InvalidToolCallError("arguments are not JSON", tool_call_id="c", name="f"),
        FerruleError("something else"),
    ],
    ids=lambda e: e.kind,
)
def test_errors_that_are_not_the_providers_do_not_fall_back(rt, error):
    first, second = Recorder(errors=[error]), Recorder()
    with Agent(rt, FallbackModel(TestModel(function=first), TestModel(function=second))) as agent:
        try:
            failure = agent.run("Hi").error  # the run fails: its RunOutput holds the error
        except InvalidInputError as refused:  # a refusal is raised, as a bad argument is
            failure = refused
    assert type(failure) is type(error) and failure.message == error.message
    assert isinstance(failure, InvalidInputError) == (error.kind == "invalid_input")
    assert second.requests == []


def test_no_fallback_after_the_first_streamed_delta(rt):
    """Output already streamed is not repeated or contradicted by another model."""
    broken = TestModel([{"text": "partial answer", "error": "connection lost"}])
    second = Recorder("another answer")
    with Agent(rt, FallbackModel(broken, TestModel(function=second))) as agent:
        responses = list(agent.query("Hi"))
    text = "".join(r.content for r in responses if r.type == "output_text")
    assert text == "partial answer"
    assert responses[-1].type == "error" and isinstance(responses[-1].error, ModelError)
    assert "connection lost" in responses[-1].content
    assert second.requests == []


def test_when_every_model_fails_the_error_carries_each_failure(rt):
    model = FallbackModel(
        TestModel(function=Recorder(errors=[RateLimitError("busy", provider="a")])),
        TestModel(function=Recorder(errors=[AuthenticationError("bad key", provider="b")])),
    )
    with Agent(rt, model) as agent:
        error = agent.run("Hi").error
    assert isinstance(error, FallbackModelsFailedError)
    assert isinstance(error, ModelError)  # an outer FallbackModel would fall back on it
    assert [type(f) for f in error.failures] == [RateLimitError, AuthenticationError]
    assert [f["model"] for f in error.details["failures"]] == [0, 1]
    assert "bad key" in error.message
    rebuilt = FallbackModelsFailedError(error.message, **error.details)
    assert [f.message for f in rebuilt.failures] == ["busy", "bad key"]


def test_fallback_on_narrows_what_falls_back(rt):
    only_rate_limits = FallbackModel(
        TestModel(function=Recorder(errors=[AuthenticationError("bad key", provider="p")])),
        TestModel(function=Recorder()),
        fallback_on=(RateLimitError,),
    )
    with Agent(rt, only_rate_limits) as agent:
        assert isinstance(agent.run("Hi").error, AuthenticationError)
    seen: list[FerruleError] = []

    def predicate(error: FerruleError) -> bool:
        seen.append(error)
        return error.details.get("status") == 503

    first = Recorder(errors=[ProviderUnavailableError("down", provider="p", status=503)])
    by_predicate = FallbackModel(
        TestModel(function=first), TestModel(["saved"]), fallback_on=predicate
    )
    with Agent(rt, by_predicate) as agent:
        assert agent.run("Hi").content == "saved"
    assert [e.kind for e in seen] == ["provider_unavailable"]


def test_fallback_models_are_defined_only_when_needed_and_deleted_with_the_agent(rt):
    before = components(rt)
    model = FallbackModel(
        TestModel(function=Recorder(errors=[None, RateLimitError("busy", provider="p")])),
        TestModel(["fallback"]),
    )
    agent = Agent(rt, model)
    agent.run("Hi")
    assert len(components(rt) - before) == 1  # the first model only
    assert agent.run("Hi").content == "fallback"
    assert len(components(rt) - before) == 2
    agent.delete()
    assert components(rt) == before


def test_fallback_in_a_streamed_query_with_tools(rt):
    """A tool-calling turn on the fallback, then the final answer on the first model."""
    first = Recorder("The sum is 3.", errors=[RateLimitError("busy", provider="p"), None])
    second = TestModel([{"tool_calls": [call("add", a=1, b=2)]}])

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    with Agent(rt, FallbackModel(TestModel(function=first), second), tools=[add]) as agent:
        responses = list(agent.query("1 + 2?"))
    switches = [r.type for r in responses if r.is_type_switched]
    assert switches == ["tool_call", "tool_call_result", "output_text"]
    assert responses[1].content["result"] == 3
    assert "".join(r.content for r in responses[2:]) == "The sum is 3."


def test_fallback_between_shared_lang_models(rt):
    async def define() -> tuple[LangModel, LangModel]:
        failing = TestModel(function=Recorder(errors=[RateLimitError("busy", provider="p")]))
        return (
            await LangModel.new(failing, runtime=rt),
            await LangModel.new(TestModel(["shared fallback"]), runtime=rt),
        )

    first, second = rt._loop.run(define())
    try:
        with Agent(FallbackModel(first, second)) as agent:
            assert agent.runtime is rt
            assert agent.run("Hi").content == "shared fallback"
        assert {first.name, second.name} <= components(rt)  # shared: not the agent's to delete
    finally:
        first.delete()
        second.delete()


def test_fallback_model_refuses_what_is_not_a_model():
    with pytest.raises(InvalidInputError) as raised:
        FallbackModel(TestModel(), "gpt-4o")
    assert raised.value.errors[0]["path"] == "models[1]"
    with pytest.raises(InvalidInputError):
        FallbackModel(TestModel(), FallbackModel(TestModel()))


# -- ModelRetry -----------------------------------------------------------------------------------


def test_model_retry_sends_the_message_back_and_the_model_tries_again(rt):
    seen: list[tuple[int, int]] = []

    def lookup(year: int, ctx: ToolContext) -> str:
        """Look up a year."""
        seen.append((year, ctx.retry))
        if year < 2000:
            raise ModelRetry(f"{year} is too early: give a year after 2000")
        return f"{year}: a fine year"

    model = TestModel(
        [
            {"tool_calls": [call("lookup", year=1999)]},
            {"tool_calls": [call("lookup", year=2001)]},
            "2001 it is.",
        ]
    )
    with Agent(rt, model, tools=[lookup]) as agent:
        responses = list(agent.query("Pick a year"))
        sent = agent.runtime.kernel.component(agent._component).requests
    assert seen == [(1999, 0), (2001, 1)]
    results = [r.content for r in responses if r.type == "tool_call_result"]
    assert results[0]["error"] == "1999 is too early: give a year after 2000"
    assert results[1]["result"] == "2001: a fine year"
    assert sent[1].messages[-1].text == "1999 is too early: give a year after 2000"
    assert "".join(r.content for r in responses if r.type == "output_text") == "2001 it is."


def test_a_tool_retried_past_its_retries_stops_the_run(rt):
    @tool(retries=2)
    def never(x: int) -> str:
        """Never satisfied."""
        raise ModelRetry("try again")

    model = TestModel([{"tool_calls": [call("never", x=i)]} for i in range(5)])
    with Agent(rt, model, tools=[never]) as agent:
        responses = list(agent.query("go"))
        sent = agent.runtime.kernel.component(agent._component).requests
    assert len(sent) == 3  # the first try and two retries
    last = responses[-1]
    assert last.type == "error" and isinstance(last.error, ToolRetriesExceededError)
    assert last.error.details == {"tool": "never", "retries": 2}
    assert "try again" in last.content


def test_the_default_is_one_retry_and_a_new_run_starts_afresh(rt):
    def picky(x: int) -> str:
        """Picky."""
        raise ModelRetry("no")

    assert Tool.from_function(picky).retries == 1
    script = [{"tool_calls": [call("picky", x=1)]}, "fine", {"tool_calls": [call("picky", x=2)]}]
    with Agent(rt, TestModel([*script, "fine again"]), tools=[picky]) as agent:
        assert agent.run("one").content == "fine"
        assert agent.run("two").content == "fine again"  # the count is per run
    strict = Tool.from_function(picky, retries=0)
    with Agent(rt, TestModel(script), tools=[strict]) as agent:
        assert isinstance(agent.run("one").error, ToolRetriesExceededError)
    with pytest.raises(InvalidInputError) as raised:
        Tool.from_function(picky, retries=-1)
    assert raised.value.errors[0]["path"] == "retries"


def test_model_retry_from_a_json_schema_tool(rt):
    def handler(city: str) -> str:
        raise ModelRetry(f"unknown city {city!r}: try a capital")

    schema = {"name": "weather", "parameters": {"type": "object"}}
    model = TestModel([{"tool_calls": [call("weather", city="Atlantis")]}, "Sorry."])
    with Agent(rt, model, tools=[Tool.from_schema(schema, handler)]) as agent:
        output = agent.run("Weather?")
    assert output.messages[2].content == "unknown city 'Atlantis': try a capital"


# -- UsageLimits ----------------------------------------------------------------------------------


def looping_model(turns: int = 5) -> TestModel:
    return TestModel([{"tool_calls": [call("noop")]} for _ in range(turns)] + ["done"])


def noop() -> str:
    """Do nothing."""
    return "ok"


def test_request_limit_stops_the_run_before_the_next_request(rt):
    with Agent(rt, looping_model(), tools=[noop]) as agent:
        output = agent.run("go", usage_limits=UsageLimits(request_limit=2))
        sent = agent.runtime.kernel.component(agent._component).requests
    assert len(sent) == 2
    assert output.status == "error" and isinstance(output.error, UsageLimitExceeded)
    assert output.error.details == {"limit": "request_limit", "maximum": 2, "value": 3}
    assert "request_limit of 2" in output.content


def test_token_limits_are_checked_after_each_response(rt):
    # The test model counts words: "one two three four" is 4 output tokens
    cases = [
        (UsageLimits(output_tokens_limit=3), "output_tokens_limit", 4),
        (UsageLimits(input_tokens_limit=3), "input_tokens_limit", 4),
        (UsageLimits(total_tokens_limit=7), "total_tokens_limit", 8),
    ]
    for limits, name, value in cases:
        with Agent(rt, TestModel(), usage_limits=limits) as agent:
            stream = agent.query("one two three four")
            responses = list(stream)
        assert responses[-1].type == "error", name
        error = responses[-1].error
        assert isinstance(error, UsageLimitExceeded)
        assert error.details["limit"] == name and error.details["value"] == value
        assert stream.output.status == "error"
        assert agent.get_messages() == []  # a failed query leaves the history as it was


def test_tokens_add_up_over_the_run(rt):
    # 3 requests, each reading the growing conversation: the sum crosses the limit
    with Agent(rt, looping_model(), tools=[noop]) as agent:
        error = agent.run("go", usage_limits=UsageLimits(input_tokens_limit=10)).error
    assert isinstance(error, UsageLimitExceeded)
    assert error.details["limit"] == "input_tokens_limit"
    assert error.details["value"] > 10


def test_runs_within_their_limits_complete_and_a_run_overrides_the_agents(rt):
    agent_limits = UsageLimits(request_limit=1)
    with Agent(rt, looping_model(2), tools=[noop], usage_limits=agent_limits) as agent:
        assert isinstance(agent.run("go").error, UsageLimitExceeded)
    with Agent(rt, looping_model(2), tools=[noop], usage_limits=agent_limits) as agent:
        output = agent.run("go", usage_limits=UsageLimits(request_limit=3, total_tokens_limit=500))
    assert output.content == "done" and len(output.metrics.model_calls) == 3
    assert UsageLimits().request_limit == 50  # pydantic-ai's default


def test_usage_limits_refuse_negative_values():
    with pytest.raises(InvalidInputError) as raised:
        UsageLimits(request_limit=-1)
    assert raised.value.errors[0]["path"] == "request_limit"


def test_failed_fallback_attempts_are_not_requests(rt):
    first = Recorder(errors=[RateLimitError("busy", provider="p")])
    model = FallbackModel(TestModel(function=first), TestModel(["fine"]))
    with Agent(rt, model, usage_limits=UsageLimits(request_limit=1)) as agent:
        assert agent.run("Hi").content == "fine"


# -- dependency injection -------------------------------------------------------------------------


@attrs.frozen
class Deps:
    user_name: str
    greetings: list[str]


def greet(ctx: ToolContext[Deps], loud: bool = False) -> str:
    """Greet the user.

    Args:
        loud: Shout.
    """
    ctx.deps.greetings.append(ctx.tool_call.id)
    text = f"hello {ctx.deps.user_name}"
    return text.upper() if loud else text


def test_deps_reach_a_tool_whose_first_parameter_is_the_context(rt):
    deps = Deps("ada", [])
    model = TestModel([{"tool_calls": [call("greet", loud=True)]}, "done"])
    with Agent(rt, model, tools=[greet]) as agent:
        output = agent.run("Greet me", deps=deps)
        sent = agent.runtime.kernel.component(agent._component).requests
    assert output.messages[2].content == "HELLO ADA"
    assert len(deps.greetings) == 1
    [schema] = sent[0].tools
    assert schema.function.parameters == {
        "type": "object",
        "properties": {"loud": {"type": "boolean", "description": "Shout.", "default": False}},
    }  # the context parameter is not the model's to fill


def test_deps_in_query_and_without_deps(rt):
    received: list[object] = []

    def peek(ctx: ToolContext) -> str:
        """Peek."""
        received.append(ctx.deps)
        return "ok"

    script = [{"tool_calls": [call("peek")]}, "done"]
    with Agent(rt, TestModel(script * 2), tools=[peek]) as agent:
        list(agent.query("with", deps={"db": "conn"}))
        list(agent.query("without"))
    assert received == [{"db": "conn"}, None]


async def test_deps_on_an_async_runtime_with_an_async_tool():
    async def fetch(ctx: ToolContext[dict[str, int]], key: str) -> int:
        """Fetch a value."""
        await asyncio.sleep(0)
        return ctx.deps[key]

    async with AsyncRuntime() as art:
        model = TestModel([{"tool_calls": [call("fetch", key="answer")]}, "42"])
        async with Agent(art, model, tools=[fetch]) as agent:
            output = await agent.arun("What is it?", deps={"answer": 42})
    assert output.messages[2].content == "42"
