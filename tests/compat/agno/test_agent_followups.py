"""Agno's follow-up suggestions on ferrule's turn loop: ``Agent(followups=True,
num_followups=..., followup_model=...)``, the follow-up model's request (the run's input
and reply, the `Followups` schema), ``RunOutput.followups`` and `FollowupsStartedEvent` /
`FollowupsCompletedEvent`. The models are OpenAI's wire on the loopback server (`wire`:
conftest)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ferrule.agent import Agent, Followups
from ferrule.db.sqlite import SqliteDb
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import FollowupsCompletedEvent, FollowupsStartedEvent
from ferrule_kernel import InvalidInputError

SUGGESTIONS = ["Which river flows through Paris?", "Plan a weekend trip to Paris"]


def texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content)
    return content or ""


def test_a_run_suggests_followups_after_its_reply(wire):
    wire.says("Paris is the capital of France.", json.dumps({"suggestions": SUGGESTIONS}))
    agent = Agent(model=OpenAIChat(id="gpt-4o"), followups=True, num_followups=2)
    output = agent.run("What is the capital of France?")
    agent.delete()
    assert output.content == "Paris is the capital of France."
    assert output.followups == SUGGESTIONS
    assert output.to_dict()["followups"] == SUGGESTIONS

    main, asked = wire.bodies
    assert main["model"] == asked["model"] == "gpt-4o"  # the agent's own model by default
    user = texts(asked["messages"][-1])
    assert "User message:\nWhat is the capital of France?" in user
    assert "Assistant response:\nParis is the capital of France." in user
    assert "exactly 2 follow-up" in user
    schema = asked["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["suggestions"]["type"] == "array"
    assert schema["required"] == ["suggestions"]


def test_followups_stream_their_events_before_the_content_completes(wire):
    wire.says("Paris.", json.dumps({"suggestions": SUGGESTIONS[:1]}))
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        followups=True,
        num_followups=1,
        followup_model=OpenAIChat(id="gpt-4o-mini"),
    )
    events = list(agent.run("Capital of France?", stream=True, stream_events=True))
    agent.delete()
    kinds = [e.event for e in events if e.event != "RunContent"]
    assert kinds[-4:] == [
        "FollowupsStarted",
        "FollowupsCompleted",
        "RunContentCompleted",
        "RunCompleted",
    ]
    started = next(e for e in events if isinstance(e, FollowupsStartedEvent))
    done = next(e for e in events if isinstance(e, FollowupsCompletedEvent))
    assert done.followups == SUGGESTIONS[:1] and started.run_id == done.run_id
    assert done.agent_id == agent.id
    assert [b["model"] for b in wire.bodies] == ["gpt-4o", "gpt-4o-mini"]
    assert FollowupsCompletedEvent.from_dict(done.to_dict()).followups == SUGGESTIONS[:1]


def test_a_followup_model_that_answers_out_of_shape_leaves_none(wire):
    # the follow-up model is asked again once (the output's retry), then given up on
    wire.says("Paris.", "Ask about the Seine.", "Ask about the Louvre.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), followups=True)
    events = list(agent.run("Capital of France?", stream=True, stream_events=True))
    agent.delete()
    done = next(e for e in events if isinstance(e, FollowupsCompletedEvent))
    assert done.followups is None
    assert events[-1].event == "RunCompleted" and events[-1].content == "Paris."
    assert "exactly 3 follow-up" in texts(wire.bodies[1]["messages"][-1])


def test_the_followups_are_stored_with_the_run(wire, tmp_path):
    wire.says("Paris.", json.dumps({"suggestions": SUGGESTIONS}))
    db = SqliteDb(db_file=str(tmp_path / "agno.db"))
    agent = Agent(model=OpenAIChat(id="gpt-4o"), db=db, followups=True, num_followups=2)
    output = agent.run("Capital of France?")
    stored = agent.get_run_output(output.run_id)
    agent.delete()
    assert stored is not None and stored.followups == SUGGESTIONS


def test_without_followups_no_second_request_is_made(wire):
    wire.says("Paris.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"))
    output = agent.run("Capital of France?")
    agent.delete()
    assert output.followups is None and len(wire.bodies) == 1


def test_followups_is_agnos_shape_and_bad_settings_are_refused():
    assert Followups(suggestions=["a"]).suggestions == ["a"]
    with pytest.raises(TypeError):
        Followups(["a"])  # type: ignore[misc]  # keyword only, as Agno's pydantic model
    with pytest.raises(InvalidInputError) as caught:
        Agent(model=OpenAIChat(id="gpt-4o"), num_followups=-1)
    assert caught.value.errors[0]["path"] == "num_followups"
    with pytest.raises(InvalidInputError) as caught:
        Agent(model=OpenAIChat(id="gpt-4o"), followups="yes")
    assert caught.value.errors[0]["path"] == "followups"
