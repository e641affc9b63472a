"""Agno's chain-of-thought reasoning (``reasoning_agent``, ``reasoning_min_steps``,
``reasoning_max_steps``): before the main model answers, a step-writing agent is asked for
`ReasoningStep` s until one says it is done (or the steps run out), each streamed as a
`ReasoningStepEvent`; its messages join the run's and its steps are the run's
``reasoning_steps``. On `TestModel`, answering each request from a script and recording
what it was sent."""

from __future__ import annotations

import json

import pytest
from ferrule.agent import Agent
from ferrule.reasoning.step import NextAction, ReasoningSteps
from ferrule.run.agent import ReasoningStepEvent
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


def steps(*items: tuple[str, str]) -> str:
    """A reasoning agent's answer: steps of (title, next action)."""
    return json.dumps(
        {
            "reasoning_steps": [
                {"title": t, "action": f"do {t}", "result": f"{t} done", "next_action": n}
                for t, n in items
            ]
        }
    )


class Script:
    """A TestModel function answering in order and keeping each request's texts."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.sent: list[list[str]] = []

    def __call__(self, infer_input) -> str:
        self.sent.append([m.text for m in infer_input.messages])
        return self.answers.pop(0)


def test_the_steps_bounds_make_the_agents_model_reason_in_steps():
    script = Script(steps(("Read", "continue")), steps(("Add", "final_answer")), "The answer is 5.")
    agent = Agent(model=TestModel(function=script), reasoning_min_steps=2, reasoning_max_steps=4)
    events = list(agent.run("What is 2+3?", stream=True, stream_events=True, yield_run_output=True))
    output = events.pop()
    agent.delete()
    names = [e.event for e in events]
    assert names[:5] == [
        "RunStarted",
        "ReasoningStarted",
        "ReasoningStep",
        "ReasoningStep",
        "ReasoningCompleted",
    ]
    stepped = [e for e in events if isinstance(e, ReasoningStepEvent)]
    assert [e.content.title for e in stepped] == ["Read", "Add"]
    assert stepped[0].content_type == "ReasoningStep"
    assert "Action: do Read" in stepped[0].reasoning_content
    assert output.content == "The answer is 5."
    assert [s.title for s in output.reasoning_steps] == ["Read", "Add"]
    assert output.reasoning_steps[1].next_action == NextAction.FINAL_ANSWER.value
    # the reasoning agent was told the bounds; the main model read the steps
    assert "2" in script.sent[0][0] and "4" in script.sent[0][0]
    assert any('"title": "Add"' in text for text in script.sent[2])


def test_max_steps_bounds_the_rounds():
    script = Script(steps(("One", "continue")), steps(("Two", "continue")), "done")
    agent = Agent(model=TestModel(function=script), reasoning_max_steps=2)
    output = agent.run("go")
    agent.delete()
    assert [s.title for s in output.reasoning_steps] == ["One", "Two"]
    assert output.content == "done"
    assert len(script.sent) == 3  # two rounds of reasoning, then the answer


def test_a_reasoning_agent_of_ones_own_reasons():
    thinker_script = Script(steps(("Plan", "final_answer")))
    thinker = Agent(
        model=TestModel(function=thinker_script),
        instructions="Think in steps.",
        output_schema=ReasoningSteps,
    )
    main = Script("Planned.")
    agent = Agent(model=TestModel(function=main), reasoning_agent=thinker)
    output = agent.run("plan it")
    agent.delete()
    thinker.delete()
    assert [s.title for s in output.reasoning_steps] == ["Plan"]
    assert "Think in steps." in thinker_script.sent[0][0]
    assert output.content == "Planned."


def test_a_failed_reasoning_is_skipped_and_the_run_answers():
    sent = []

    def model(infer_input) -> str:
        texts = [m.text for m in infer_input.messages]
        sent.append(texts)
        return "not json at all" if texts[0].startswith("Work through") else "Answered anyway."

    agent = Agent(model=TestModel(function=model), reasoning_max_steps=3)
    output = agent.run("go")
    agent.delete()
    assert output.status == "completed" and output.content == "Answered anyway."
    assert output.reasoning_steps is None
    assert sent[-1] == ["go"]  # nothing of the failed reasoning reached the model


def test_bad_settings_are_refused_naming_them():
    for options, field in (
        ({"reasoning_min_steps": 0}, "reasoning_min_steps"),
        ({"reasoning_min_steps": 5, "reasoning_max_steps": 3}, "reasoning_max_steps"),
        ({"reasoning_max_steps": "ten"}, "reasoning_max_steps"),
        ({"reasoning_agent": "thinker"}, "reasoning_agent"),
    ):
        with pytest.raises(InvalidInputError) as raised:
            Agent(model=TestModel(), **options)
        assert raised.value.errors[0]["path"] == field
