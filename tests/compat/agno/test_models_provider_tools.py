"""A provider's own tools given as its declarations (Agno's ``tools=[{"type": ...}]``):
sent to the provider that runs them, never run here, what they did kept in the run and sent
back on the next turn where the provider wants it (`wire`: conftest; Anthropic's loopback
checks every request as Anthropic would)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from ferrule.agent import Agent
from ferrule.models.anthropic import Claude
from ferrule.models.openai import OpenAIChat
from ferrule.tools import ProviderTool
from ferrule_anthropic.testing import message_events, stream_reply
from ferrule_kernel import InvalidInputError
from ferrule_openai.testing import ResponsesCall, responses_events, responses_reply, stream_events

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_builtin_tools import TEXT, builtin_tools_answer  # a module beside this file

CODE_RESULT = {
    "type": "code_execution_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": {"type": "code_execution_result", "stdout": "5.5\n", "stderr": "", "return_code": 0},
}


def test_anthropic_server_tools_are_sent_and_their_work_goes_back(wire, program):
    used = ("srvtoolu_1", "code_execution", {"code": "print(sum(range(1, 11)) / 10)"}, CODE_RESULT)
    wire.replies(
        stream_reply(message_events(server_tools=[used], text=["The mean is 5.5."])),
        stream_reply(message_events(text=["The median is 5.5 too."])),
    )
    scope = program("anthropic_server_tools")
    assert scope["first"].content == "The mean is 5.5."
    assert scope["second"].content == "The median is 5.5 too."
    first, second = wire.bodies
    assert first["tools"] == [
        {"type": "code_execution_20250825", "name": "code_execution"},
        {"type": "advisor_20260301", "name": "advisor", "model": "claude-opus-4-6"},
    ]
    assert wire.requests[0].headers["anthropic-beta"] == "code-execution-2025-08-25"
    # The next turn carries the server tool's blocks back, as Anthropic sent them.
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][:2] == [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": used[2]},
        CODE_RESULT,
    ]
    assert assistant["content"][2] == {"type": "text", "text": "The mean is 5.5."}
    # The run's record: no tool ran here; the reasoning shown is none.
    assert not scope["first"].tools
    assert not scope["first"].reasoning_content


def test_openai_web_search_beside_a_function_tool(wire, program):
    search = {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "France"},
    }
    events = responses_events(calls=[ResponsesCall("save_note", {"text": "an election"}, "c1")])
    found = [
        {"type": "response.output_item.added", "output_index": 0, "item": search},
        {"type": "response.output_item.done", "output_index": 0, "item": search},
    ]
    wire.replies(stream_events([events[0], *found, *events[1:]]), responses_reply("Saved."))
    scope = program("responses_server_tools")
    assert scope["saved"] == ["an election"]  # the function tool ran here
    assert scope["run"].content == "Saved."
    first, second = wire.bodies
    # Function tools first, then the provider's, as given.
    assert [t["type"] for t in first["tools"]] == ["function", "web_search_preview"]
    assert first["tools"][1] == {"type": "web_search_preview"}
    # The search item stays in the run, not in the next request (store is false).
    assert "web_search_call" not in json.dumps(second["input"])


def test_a_provider_tool_is_recognised_by_its_type():
    agent = Agent(model=Claude(), tools=[{"type": "web_search_20250305", "name": "web_search"}])
    [tool] = agent.get_tools()
    assert isinstance(tool, ProviderTool) and tool.provider == "anthropic"
    assert tool.to_dict() == {"type": "web_search_20250305", "name": "web_search"}


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "function", "function": {"name": "f", "parameters": {}}},  # no function to run
        {"name": "f", "parameters": {"type": "object"}},
        {"type": "bash_20250124", "name": "bash"},  # Anthropic's, but the caller runs it
    ],
)
def test_a_schema_without_a_function_is_still_refused(spec):
    with pytest.raises(InvalidInputError, match="needs the function to call"):
        Agent(model=Claude(), tools=[spec])


def test_anthropic_server_tools_need_their_name():
    with pytest.raises(InvalidInputError) as error:
        Agent(model=Claude(), tools=[{"type": "code_execution_20250825"}])
    assert "name" in str(error.value)


def test_another_providers_model_refuses_the_tool_naming_it(wire):
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[{"type": "web_search_preview"}])
    with pytest.raises(InvalidInputError) as error:
        agent.run("news?")
    assert error.value.errors[0]["path"].endswith("tools[0]")
    assert "web_search_preview" in str(error.value)
    assert wire.requests == []  # nothing sent without it


def test_the_host_can_forbid_server_tools(wire):
    model = Claude(options={"server_tools": []})  # a host policy: none at all
    agent = Agent(model=model, tools=[{"type": "web_search_20250305", "name": "web_search"}])
    with pytest.raises(InvalidInputError) as error:
        agent.run("news?")
    assert error.value.errors[0]["path"] == "$.provider_tools[0].type"
    assert wire.requests == []
    allowed = Claude(options={"server_tools": ["web_search"]})
    wire.says("Nothing much.")
    Agent(model=allowed, tools=[{"type": "web_search_20250305", "name": "web_search"}]).run("?")
    assert wire.last["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]


def test_the_replays_loopback_answers_provider_tools_as_the_providers_do(wire, program):
    wire.replies(lambda request: builtin_tools_answer(request.path, request.json))
    wire.says("Still the loopback.")  # the next turn used the tool already: answered as ever
    scope = program("anthropic_server_tools")
    assert scope["first"].content == TEXT
    assistant = wire.bodies[1]["messages"][1]["content"]
    assert [b["type"] for b in assistant] == [
        "server_tool_use",
        "bash_code_execution_tool_result",
        "text",
    ]
    assert builtin_tools_answer("/v1/messages", wire.bodies[1]) is None
    assert builtin_tools_answer("/v1/chat/completions", {"tools": []}) is None


def test_the_replays_loopback_searches_for_a_responses_model(wire, program):
    wire.replies(lambda request: builtin_tools_answer(request.path, request.json))
    scope = program("responses_server_tools")
    assert scope["run"].content == TEXT
    assert scope["saved"] == []  # it searched and answered: no function was called
    assert len(wire.requests) == 1
