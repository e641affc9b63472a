"""The settings every Agno model class takes and ferrule's agent reads
(`ferrule.agent.model_settings`): the response cache on disk, the model's instructions and
system prompt, retrying a malformed tool call with guidance, and the structured-output
capability flags choosing how an output schema is asked for. Each runs an Agent against
the loopback `wire` speaking the provider's own API (conftest)."""

from __future__ import annotations

import json
import time

import attrs
import pytest
from ferrule.agent import Agent, FallbackModel
from ferrule.models.anthropic import Claude
from ferrule.models.base import Model
from ferrule.models.google import Gemini
from ferrule.models.openai import OpenAIChat, OpenAILike
from ferrule.models.xai import xAI
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.errors import InvalidToolCallError
from ferrule_kit.testing import chat_completions
from ferrule_kit.testing.conformance import ScriptedTurn
from ferrule_kit.testing.loopback import Reply, sse


def bad_call(name: str = "add", arguments: str = '{"a": 2,') -> Reply:
    """An OpenAI reply calling ``name`` with arguments that are not JSON."""
    turn = ScriptedTurn(
        tool_calls=(ToolCall("call_bad", name, arguments),), finish_reason="tool_calls"
    )
    return chat_completions.reply(turn)


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


# -- the response cache ------------------------------------------------------------------


def test_a_cached_reply_answers_the_same_request_without_a_call(wire, tmp_path):
    wire.says("A cat named Miso fixed the tap.")
    model = OpenAIChat(id="gpt-4o", cache_response=True, cache_dir=str(tmp_path))
    first = Agent(model=model).run("Write a very short story.")
    second = Agent(model=model).run("Write a very short story.")
    assert first.content == second.content == "A cat named Miso fixed the tap."
    assert len(wire.requests) == 1  # the second run was answered from the cache
    [kept] = list(tmp_path.glob("*.json"))
    assert len(kept.stem) == 64  # a SHA-256 of the request
    assert "Miso" in kept.read_text() and "sk-" not in kept.read_text()

    wire.says("Another story.")  # a different request is not a hit
    assert Agent(model=model).run("Write another one.").content == "Another story."
    assert len(wire.requests) == 2


def test_a_cached_reply_streams_as_a_live_one(wire, tmp_path):
    wire.says("Streamed once, replayed after.")
    model = OpenAIChat(id="gpt-4o", cache_response=True, cache_dir=str(tmp_path))
    live = [e.content for e in Agent(model=model).run("hi", stream=True) if e.event == "RunContent"]
    replayed = [
        e.content for e in Agent(model=model).run("hi", stream=True) if e.event == "RunContent"
    ]
    assert "".join(live) == "".join(replayed) == "Streamed once, replayed after."
    assert len(wire.requests) == 1


def test_the_cache_keys_on_the_model_and_the_request(wire, tmp_path):
    wire.says("one", "two", "three")
    for model in (
        OpenAIChat(id="gpt-4o", cache_response=True, cache_dir=str(tmp_path)),
        OpenAIChat(id="gpt-4o-mini", cache_response=True, cache_dir=str(tmp_path)),
        OpenAIChat(id="gpt-4o", temperature=0.1, cache_response=True, cache_dir=str(tmp_path)),
    ):
        Agent(model=model).run("hi")
    assert len(wire.requests) == 3 and len(list(tmp_path.glob("*.json"))) == 3


def test_an_expired_reply_is_asked_for_again(wire, tmp_path):
    wire.says("old", "new")
    model = OpenAIChat(id="gpt-4o", cache_response=True, cache_dir=str(tmp_path), cache_ttl=60)
    assert Agent(model=model).run("hi").content == "old"
    [kept] = list(tmp_path.glob("*.json"))
    stored = json.loads(kept.read_text())
    stored["created"] = time.time() - 61
    kept.write_text(json.dumps(stored))
    assert Agent(model=model).run("hi").content == "new"
    assert len(wire.requests) == 2


def test_tool_turns_are_cached_and_the_tools_still_run(wire, tmp_path):
    wire.calls("counted_add", a=2, b=3)
    wire.says("It is 5.")
    ran = []

    def counted_add(a: int, b: int) -> int:
        """Add two numbers."""
        ran.append((a, b))
        return a + b

    model = OpenAIChat(id="gpt-4o", cache_response=True, cache_dir=str(tmp_path))
    for _ in range(2):
        assert Agent(model=model, tools=[counted_add]).run("2+3?").content == "It is 5."
    assert len(wire.requests) == 2  # both model turns of the second run came from the cache
    assert ran == [(2, 3), (2, 3)]


def test_a_malformed_reply_is_not_cached(wire, tmp_path):
    wire.replies(bad_call())
    wire.says("It is 5.")
    model = OpenAIChat(id="gpt-4o", cache_response=True, cache_dir=str(tmp_path))
    assert Agent(model=model, tools=[add]).run("2+3?").content == "It is 5."
    # the guided request's reply is kept; the malformed one is not
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_the_cache_lives_under_xdg_cache_home_by_default(wire, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    wire.says("kept")
    Agent(model=Claude(id="claude-sonnet-4-5", cache_response=True)).run("hi")
    assert len(list((tmp_path / "ferrule" / "model_responses").glob("*.json"))) == 1


def test_an_unreadable_cache_file_is_a_miss_and_is_replaced(wire, tmp_path):
    wire.says("first", "second")
    model = OpenAIChat(id="gpt-4o", cache_response=True, cache_dir=str(tmp_path))
    Agent(model=model).run("hi")
    [kept] = list(tmp_path.glob("*.json"))
    kept.write_text("{not json")
    assert Agent(model=model).run("hi").content == "second"
    assert json.loads(kept.read_text())["items"]  # written again, whole


def test_bad_cache_settings_name_the_keyword():
    with pytest.raises(InvalidInputError) as raised:
        OpenAIChat(id="gpt-4o", cache_ttl="soon")
    assert raised.value.details["errors"][0]["path"] == "cache_ttl"
    with pytest.raises(InvalidInputError, match="True or False"):
        Gemini(cache_response="yes")


def test_without_cache_response_nothing_is_kept(wire, tmp_path):
    wire.says("a", "b")
    model = OpenAIChat(id="gpt-4o", cache_dir=str(tmp_path))
    Agent(model=model).run("hi")
    Agent(model=model).run("hi")
    assert len(wire.requests) == 2 and not list(tmp_path.iterdir())


# -- the model's instructions and system prompt ------------------------------------------


def test_the_models_instructions_and_system_prompt_join_the_system_message(wire):
    wire.says("ok")
    model = Claude(
        id="claude-sonnet-4-5",
        instructions=["Answer in French."],
        system_prompt="You are served by Claude.",
    )
    agent = Agent(model=model, instructions=["Be brief."])
    agent.run("hi")
    system = wire.last["system"]
    text = system if isinstance(system, str) else "".join(b["text"] for b in system)
    assert text.index("Be brief.") < text.index("Answer in French.")
    assert text.index("Answer in French.") < text.index("You are served by Claude.")


def test_the_models_settings_reach_the_system_message_alone(wire):
    wire.says("ok")
    Agent(model=OpenAIChat(id="gpt-4o", instructions="Use metric units.")).run("hi")
    system = wire.last["messages"][0]
    assert system["role"] == "system" and "Use metric units." in system["content"]


def test_a_subclass_may_override_what_the_model_adds(wire):
    wire.says("ok")

    class Tagged(OpenAIChat):
        def get_system_message_for_model(self, tools=None):
            return f"{len(tools or [])} tool(s) are yours."

    Agent(model=Tagged(id="gpt-4o"), tools=[add]).run("hi")
    assert "1 tool(s) are yours." in wire.last["messages"][0]["content"]


def test_a_given_system_message_is_kept_whole(wire):
    wire.says("ok")
    model = OpenAIChat(id="gpt-4o", system_prompt="from the model")
    Agent(model=model, system_message="Only this.").run("hi")
    assert wire.last["messages"][0]["content"] == "Only this."


# -- retry with guidance -----------------------------------------------------------------


def test_a_malformed_call_is_asked_again_with_guidance(wire):
    wire.replies(bad_call())
    wire.calls("add", a=2, b=3)
    wire.says("It is 5.")
    run = Agent(model=OpenAIChat(id="gpt-4o"), tools=[add]).run("2+3?")
    assert run.content == "It is 5."
    guided = wire.bodies[1]["messages"]
    assert guided[-1]["role"] == "user" and "could not be used" in guided[-1]["content"]
    # the note was for that request only: the run's messages and the next request lack it
    assert not any("could not be used" in json.dumps(m) for m in wire.bodies[2]["messages"])
    assert not any("could not be used" in (m.content or "") for m in run.messages)


def test_retry_with_guidance_off_ends_the_run_with_the_error(wire):
    wire.replies(bad_call())
    agent = Agent(model=OpenAIChat(id="gpt-4o", retry_with_guidance=False), tools=[add])
    output = agent.run("2+3?")
    assert output.status == "error" and isinstance(output.error, InvalidToolCallError)
    assert "invalid JSON arguments" in output.content
    assert len(wire.requests) == 1


def test_the_guidance_limit_counts_the_retries(wire):
    wire.replies(bad_call(), bad_call())
    wire.says("It is 5.")
    model = OpenAIChat(id="gpt-4o", retry_with_guidance_limit=2)
    assert Agent(model=model, tools=[add]).run("2+3?").content == "It is 5."
    notes = [m for m in wire.bodies[2]["messages"] if "could not be used" in str(m)]
    assert len(notes) == 2

    wire.replies(bad_call(), bad_call())  # the default limit: one note, then the error
    output = Agent(model=OpenAIChat(id="gpt-4o"), tools=[add]).run("2+3?")
    assert isinstance(output.error, InvalidToolCallError)
    assert "invalid JSON arguments" in output.content
    assert len(wire.requests) == 5  # the first try and its one guided retry


def test_geminis_malformed_function_call_is_asked_again(wire):
    malformed = {
        "candidates": [
            {"content": {"role": "model", "parts": []}, "finishReason": "MALFORMED_FUNCTION_CALL"}
        ]
    }
    wire.replies(Reply.sse([sse(malformed, newline="\r\n")]))
    wire.says("Done.")
    assert Agent(model=Gemini(id="gemini-2.0-flash"), tools=[add]).run("2+3?").content == "Done."
    assert "could not be used" in json.dumps(wire.bodies[1]["contents"][-1])


# -- structured outputs ------------------------------------------------------------------


@attrs.define
class City:
    name: str
    country: str


def test_a_natively_structured_model_is_sent_the_schema(wire):
    wire.says('{"name": "Lisbon", "country": "Portugal"}')
    run = Agent(model=OpenAIChat(id="gpt-4o"), output_schema=City).run("A city?")
    assert run.content == City("Lisbon", "Portugal")
    assert wire.last["response_format"]["type"] == "json_schema"
    assert all(m["role"] != "system" for m in wire.last["messages"])  # nothing told


def test_a_model_without_structured_outputs_gets_json_mode_and_the_schema_told(wire):
    wire.says('{"name": "Porto", "country": "Portugal"}')
    model = OpenAILike(
        id="m", base_url=wire.server.url + "/v1", supports_native_structured_outputs=False
    )
    run = Agent(model=model, output_schema=City).run("A city?")
    assert run.content == City("Porto", "Portugal")
    assert wire.last["response_format"] == {"type": "json_object"}
    system = wire.last["messages"][0]
    assert system["role"] == "system" and '"country"' in system["content"]


def test_json_schema_outputs_send_the_schema_without_telling_it(wire):
    wire.says('{"name": "Faro", "country": "Portugal"}')
    model = xAI(
        id="grok-3",
        supports_native_structured_outputs=False,
        supports_json_schema_outputs=True,
    )
    assert Agent(model=model, output_schema=City).run("A city?").content == City("Faro", "Portugal")
    assert wire.last["response_format"]["type"] == "json_schema"
    assert all(m["role"] != "system" for m in wire.last["messages"])


def test_use_json_mode_on_a_native_model_is_json_mode(wire):
    wire.says('{"name": "Braga", "country": "Portugal"}')
    Agent(model=OpenAIChat(id="gpt-4o"), output_schema=City, use_json_mode=True).run("A city?")
    assert wire.last["response_format"] == {"type": "json_object"}


def test_claude_marks_the_models_with_structured_output():
    assert Claude(id="claude-sonnet-4-5").supports_native_structured_outputs is True
    assert Claude(id="claude-3-5-haiku-latest").supports_native_structured_outputs is False
    assert Claude(id="claude-3-5-haiku-latest", supports_native_structured_outputs=True)


def test_a_model_of_ones_own_takes_every_setting():
    model = Model(
        "m",
        cache_response=True,
        cache_ttl=30,
        instructions=["x"],
        system_prompt="y",
        retry_with_guidance=False,
        retry_with_guidance_limit=3,
        supports_native_structured_outputs=True,
        supports_json_schema_outputs=True,
    )
    assert (model.cache_ttl, model.retry_with_guidance_limit) == (30, 3)
    assert model.get_instructions_for_model() == ["x"]
    assert model.get_system_message_for_model() == "y"


def test_of_fallback_models_the_first_ones_settings_shape_the_system_message(wire):
    wire.says("ok")
    primary = OpenAIChat(id="gpt-4o", system_prompt="Primary speaking.")
    backup = OpenAIChat(id="gpt-4o-mini", system_prompt="Backup speaking.")
    Agent(model=FallbackModel(primary, backup)).run("hi")
    system = wire.last["messages"][0]["content"]
    assert "Primary speaking." in system and "Backup speaking." not in system
