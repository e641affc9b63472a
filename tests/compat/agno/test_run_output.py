"""Agno's ``RunOutput`` fields on ferrule's runs (OpenAI's wire on the loopback server,
`wire`: conftest; the scripted test model): who ran it and on which model, its input and its
tool calls; its dict and JSON read back; its content as text."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import RunOutput, RunStatus
from ferrule_testmodel import TestModel
from pydantic import BaseModel


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_run_says_who_ran_it_on_which_model_and_what_it_called(wire):
    wire.calls("add", a=2, b=3)
    wire.says("It is 5.")
    before = int(time.time())
    agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), name="Calculator", tools=[add])
    output = agent.run("What is 2+3?")
    agent.delete()
    assert (output.agent_name, output.model, output.model_provider) == (
        "Calculator",
        "gpt-4o-mini",
        "OpenAI",
    )
    assert output.input.input_content == "What is 2+3?"
    assert [(t.tool_name, t.tool_args, t.result) for t in output.tools] == [
        ("add", {"a": 2, "b": 3}, 5)
    ]
    assert before <= output.created_at <= int(time.time())
    assert output.status == RunStatus.completed and output.followups is None


def test_a_run_output_round_trips_through_its_dict_and_json(rt):
    with Agent(
        rt,
        TestModel([{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}, "2."]),
        tools=[add],
    ) as agent:
        output = agent.run("1+1?", metadata={"ticket": "T-1"})
    data = json.loads(output.to_json(indent=None))
    assert data["status"] == "completed" and data["content"] == "2."
    assert data["input"] == {"input_content": "1+1?"} and data["metadata"] == {"ticket": "T-1"}
    again = RunOutput.from_dict(data)
    assert (again.run_id, again.status, again.content) == (output.run_id, "completed", "2.")
    assert [m.content for m in again.messages] == [m.content for m in output.messages]
    assert again.metrics.model_calls == output.metrics.model_calls
    assert [t.name for t in again.tools] == ["add"] and again.metadata == {"ticket": "T-1"}
    assert RunOutput().status is RunStatus.running and RunOutput().messages == []


class Answer(BaseModel):
    city: str
    note: str | None = None


def test_content_as_string_is_the_text_or_its_json():
    assert RunOutput("r", content="plain").get_content_as_string() == "plain"
    assert RunOutput("r", content=Answer(city="Oslo")).get_content_as_string() == '{"city":"Oslo"}'
    assert RunOutput("r", content={"a": "é"}).get_content_as_string(indent=1) == '{\n "a": "é"\n}'


def test_the_pre_hooks_see_the_media_by_kind_and_the_input_round_trips(rt):
    from ferrule.media import Image
    from ferrule.run.agent import RunInput

    seen: list[RunInput] = []

    def look(run_input: RunInput) -> None:
        seen.append(run_input)

    image = Image(url="https://example.com/cat.png")
    with Agent(rt, TestModel(["A cat."]), pre_hooks=[look]) as agent:
        output = agent.run("What is it?", images=[image])
    (run_input,) = seen
    assert run_input.images == [image] and run_input.files is None
    assert (run_input.videos, run_input.audios) == (None, None)
    assert output.input.images == [image]
    data = json.loads(json.dumps(run_input.to_dict()))
    assert data == {"input_content": "What is it?", "images": [image.to_dict()]}
    again = RunInput.from_dict(data)
    assert again.input_content == "What is it?" and again.images == [image.to_dict()]
    assert Image.from_dict(again.images[0]) == image
