"""Agno's model API on ferrule's engine: the classes' keywords reach the provider's wire,
``Model.invoke`` / ``response`` answer as Agno's, refused keywords say what to do instead,
and fallback configs switch models on the failures they name."""

from __future__ import annotations

import pytest
from ferrule.exceptions import ModelProviderError, ModelRateLimitError
from ferrule.models.anthropic import Claude
from ferrule.models.base import Model
from ferrule.models.fallback import FallbackConfig, call_model_with_fallback, get_fallback_models
from ferrule.models.google import Gemini
from ferrule.models.message import Message
from ferrule.models.ollama import Ollama
from ferrule.models.openai import OpenAIChat
from ferrule.models.response import ModelResponse
from ferrule.models.vllm import VLLM
from ferrule.tools import tool
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing.loopback import Reply


def test_every_model_class_is_an_agno_model_with_its_settings():
    model = OpenAIChat(id="gpt-4o", temperature=0.3, seed=7, name="Primary")
    assert isinstance(model, Model)
    assert (model.name, model.provider, model.temperature, model.seed) == (
        "Primary",
        "OpenAI",
        0.3,
        7,
    )
    assert model.get_provider() == "OpenAI"
    assert model.to_dict() == {"name": "Primary", "id": "gpt-4o", "provider": "OpenAI"}
    assert VLLM(id="q").infer_options == {"temperature": 0.7, "top_p": 0.8}  # Agno's defaults


def test_invoke_is_one_request_and_response_runs_the_tools(wire):
    wire.says("Hello there.")
    reply = OpenAIChat(id="gpt-4o").invoke([Message(role="user", content="Hi")])
    assert isinstance(reply, ModelResponse) and reply.content == "Hello there."
    assert wire.last["messages"] == [{"role": "user", "content": "Hi"}]
    # Agno's providers take messages, assistant_message and response_format by position,
    # the rest by name (Agno's Model passes them all by name)
    with pytest.raises(TypeError, match="at most 3 positional arguments"):
        OpenAIChat(id="gpt-4o").invoke([Message(role="user", content="Hi")], None, None, [])

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    wire.calls("add", a=2, b=3)
    wire.says("It is 5.")
    answer = OpenAIChat(id="gpt-4o").response([Message(role="user", content="2+3?")], tools=[add])
    assert answer.content == "It is 5."
    assert [t.tool_name for t in answer.tool_executions] == ["add"]


def test_keywords_reach_each_providers_wire(wire):
    wire.says("ok", "ok", "ok")
    from ferrule.agent import Agent

    Agent(model=OpenAIChat(id="gpt-4o", seed=3, default_headers={"X-Trace": "t1"})).run("hi")
    request = wire.requests[-1]
    assert request.json["seed"] == 3 and request.headers["x-trace"] == "t1"
    Agent(model=Claude(id="claude-sonnet-4-5", top_k=5, betas=["b-1", "b-2"])).run("hi")
    request = wire.requests[-1]
    assert request.json["top_k"] == 5 and request.json["max_tokens"] == 8192
    assert request.headers["anthropic-beta"] == "b-1,b-2"
    Agent(model=Gemini(id="gemini-2.5-flash", top_k=4, seed=9, cached_content="c/1")).run("hi")
    body = wire.requests[-1].json
    assert body["generationConfig"]["topK"] == 4 and body["generationConfig"]["seed"] == 9
    assert body["cachedContent"] == "c/1"


def test_claudes_output_config_joins_the_fields_ferrule_writes(wire):
    import attrs
    from ferrule.agent import Agent

    @attrs.define
    class City:
        name: str

    wire.says('{"name": "Oslo"}')
    model = Claude(id="claude-sonnet-4-5", output_config={"effort": "low"})
    assert model.output_config == {"effort": "low"}
    answer = Agent(model=model, output_schema=City).run("Capital of Norway?").content
    assert answer == City("Oslo")
    sent = wire.last["output_config"]
    assert sent["effort"] == "low" and sent["format"]["type"] == "json_schema"


def test_ollama_reads_agnos_options_and_format():
    model = Ollama(id="qwen3", options={"temperature": 0.1, "num_predict": 64}, format="json")
    assert model.infer_options == {"temperature": 0.1, "max_tokens": 64}
    assert model.options["extra_body"]["response_format"] == {"type": "json_object"}
    with pytest.raises(InvalidInputError, match="num_ctx"):
        Ollama(id="qwen3", options={"num_ctx": 8192})


def test_retries_become_the_providers_retry_policy():
    model = Claude(retries=4, delay_between_retries=2, exponential_backoff=True)
    assert (model.options["max_retries"], model.options["retry_delay"]) == (4, 2.0)
    assert model.options["retry_multiplier"] == 2.0
    assert OpenAIChat(retries=1).options["retry_multiplier"] == 1.0


def test_refused_keywords_say_what_to_do_instead():
    with pytest.raises(InvalidInputError, match="no SDK client"):
        OpenAIChat(http_client=object())
    with pytest.raises(InvalidInputError, match="search tool"):
        Gemini(search=True)
    with pytest.raises(InvalidInputError, match="ferrule's agent runs the loop"):
        OpenAIChat().run_function_calls([])
    with pytest.raises(TypeError):
        OpenAIChat(temprature=0.2)  # a misspelling


def test_fallbacks_follow_the_kind_of_failure(wire):
    rate_limited = ModelRateLimitError("slow down")
    backup, general = OpenAIChat(id="gpt-4o-mini"), Claude()
    config = FallbackConfig(on_error=[general], on_rate_limit=[backup])
    assert get_fallback_models(config, rate_limited) == [backup]
    assert get_fallback_models(config, ModelProviderError("boom", 503)) == [general]
    assert get_fallback_models(config, ModelProviderError("bad key", 401)) is None
    assert get_fallback_models(config, ModelProviderError("prompt is too long", 400)) == [general]
    switched = []
    config = FallbackConfig(
        on_error=["openai:gpt-4o-mini"], callback=lambda a, b, e: switched.append((a, b))
    )
    wire.replies(Reply(status=503, body=b'{"error": {"message": "down"}}'))
    wire.says("From the backup.")
    primary = OpenAIChat(id="gpt-4o", max_retries=0)
    answer = call_model_with_fallback(
        primary, config, messages=[Message(role="user", content="hi")]
    )
    assert answer.content == "From the backup." and switched == [("gpt-4o", "gpt-4o-mini")]
