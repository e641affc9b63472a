"""Agno's reasoning on ferrule: which models think natively, their thoughts as a
``<thinking>`` message, the step-writing reasoning agent asked again until it reaches a
final answer (or its step limit), and the manager's events, against the loopback `wire`."""

from __future__ import annotations

import asyncio
import json

from ferrule.models.anthropic import Claude
from ferrule.models.google import Gemini
from ferrule.models.message import Message
from ferrule.models.ollama import Ollama
from ferrule.models.openai import OpenAIChat, OpenAILike
from ferrule.reasoning.anthropic import is_anthropic_reasoning_model
from ferrule.reasoning.gemini import is_gemini_reasoning_model
from ferrule.reasoning.helpers import get_next_action, get_reasoning_agent
from ferrule.reasoning.manager import (
    ReasoningConfig,
    ReasoningEventType,
    ReasoningManager,
)
from ferrule.reasoning.ollama import is_ollama_reasoning_model
from ferrule.reasoning.openai import (
    aget_openai_reasoning,
    get_openai_reasoning,
    get_openai_reasoning_stream,
    is_openai_reasoning_model,
)
from ferrule.reasoning.step import NextAction, ReasoningStep


def steps(*items: dict) -> str:
    return json.dumps({"reasoning_steps": list(items)})


def test_which_models_think_natively():
    assert is_openai_reasoning_model(OpenAIChat(id="o3-mini"))
    assert not is_openai_reasoning_model(OpenAIChat(id="gpt-4o"))
    assert is_openai_reasoning_model(OpenAILike(id="deepseek-r1", base_url="http://127.0.0.1:9/v1"))
    assert is_anthropic_reasoning_model(Claude(thinking={"type": "enabled", "budget_tokens": 1024}))
    assert not is_anthropic_reasoning_model(Claude())
    assert is_gemini_reasoning_model(Gemini(id="gemini-2.5-flash", thinking_budget=512))
    assert not is_gemini_reasoning_model(Gemini(id="gemini-2.5-flash"))
    assert is_ollama_reasoning_model(Ollama(id="qwq:32b"))
    assert get_next_action(ReasoningStep(next_action=NextAction.CONTINUE)) is NextAction.CONTINUE
    assert get_next_action(ReasoningStep()) is NextAction.FINAL_ANSWER


def test_native_thoughts_become_a_thinking_message(wire):
    wire.says("<think>9.9 is 9.90, larger than 9.11</think>9.9", "Just a reply")
    agent = get_reasoning_agent(OpenAIChat(id="o3-mini"))
    messages = [
        Message(role="developer", content="Be careful."),
        Message(role="user", content="9.11 or 9.9?"),
    ]
    message = get_openai_reasoning(agent, messages)
    assert message.role == "assistant"
    assert message.reasoning_content == "9.9 is 9.90, larger than 9.11"
    assert message.content == "<thinking>\n9.9 is 9.90, larger than 9.11\n</thinking>"
    assert wire.bodies[0]["messages"][0]["content"] == "Be careful."
    assert asyncio.run(aget_openai_reasoning(agent, messages)).reasoning_content == "Just a reply"


def test_native_thoughts_stream(wire):
    wire.says("<think>step by step</think>done")
    agent = get_reasoning_agent(OpenAIChat(id="o1"))
    items = list(get_openai_reasoning_stream(agent, [Message(role="user", content="why?")]))
    assert items[-1][0] is None and items[-1][1].reasoning_content == "step by step"


def test_the_step_agent_is_asked_until_its_final_answer(wire):
    wire.says(
        steps(
            {
                "title": "Compare",
                "action": "pad 9.9",
                "result": "9.90",
                "reasoning": "same digits",
                "next_action": "continue",
                "confidence": 0.8,
            }
        ),
        steps(
            {
                "title": "Decide",
                "result": "9.90 > 9.11",
                "next_action": "final_answer",
                "confidence": 0.95,
            }
        ),
    )
    manager = ReasoningManager(
        ReasoningConfig(reasoning_model=OpenAIChat(id="gpt-4o"), max_steps=5)
    )
    run_messages = [Message(role="user", content="Which is bigger, 9.11 or 9.9?")]
    events = list(manager.reason(run_messages))
    kinds = [e.event_type for e in events]
    assert kinds == [
        ReasoningEventType.started,
        ReasoningEventType.step,
        ReasoningEventType.step,
        ReasoningEventType.completed,
    ]
    assert [e.reasoning_step.title for e in events[1:3]] == ["Compare", "Decide"]
    assert [s.next_action for s in events[-1].reasoning_steps] == [
        NextAction.CONTINUE,
        NextAction.FINAL_ANSWER,
    ]
    first = wire.bodies[0]
    assert "at least 1 and at most 5 steps" in json.dumps(first["messages"])
    assert first["response_format"]["type"] == "json_schema"
    # the reasoning joined the run's messages between two assistant notes
    assert [m.role for m in run_messages] == ["user", "assistant", "assistant", "assistant"]
    assert "Decide" in run_messages[2].content


def test_the_step_agent_stops_at_max_steps(wire):
    wire.says(steps({"title": "More", "next_action": "continue"}))
    manager = ReasoningManager(
        ReasoningConfig(reasoning_model=OpenAIChat(id="gpt-4o"), max_steps=1)
    )
    events = list(manager.reason([Message(role="user", content="think")]))
    assert events[-1].event_type is ReasoningEventType.completed
    assert len(wire.bodies) == 1


def test_the_manager_reasons_natively_with_a_thinking_model(wire):
    wire.says("<think>carefully</think>ok")
    manager = ReasoningManager(ReasoningConfig(reasoning_model=OpenAIChat(id="o4-mini")))
    assert manager.is_native_reasoning_model()
    events = list(manager.reason([Message(role="user", content="hi")]))
    assert events[-1].event_type is ReasoningEventType.completed
    assert events[-1].reasoning_content == "carefully"
    manager.config.reasoning_model = None  # nothing to reason with: an error event

    async def collect():
        return [e async for e in manager.areason([])]

    (only,) = asyncio.run(collect())
    assert only.event_type is ReasoningEventType.error and only.error == "no reasoning model"


def test_run_messages_feed_the_reasoning_agent_and_take_its_reasoning(wire):
    from ferrule.run.messages import RunMessages

    wire.says(json.dumps({"reasoning_steps": [{"title": "Only", "next_action": "final_answer"}]}))
    run_messages = RunMessages(
        system_message=Message(role="system", content="Be brief."),
        user_message=Message(role="user", content="2+2?"),
    )
    assert [m.role for m in run_messages.get_input_messages()] == ["system", "user"]
    manager = ReasoningManager(ReasoningConfig(reasoning_model=OpenAIChat(id="gpt-4o")))
    events = list(manager.reason(run_messages))
    assert events[-1].event_type is ReasoningEventType.completed
    sent = json.dumps(wire.bodies[0]["messages"])
    assert "Be brief." in sent and "2+2?" in sent
    assert [m.role for m in run_messages.messages] == ["assistant", "assistant", "assistant"]
