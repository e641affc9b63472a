"""Agno's Agent options for what the model is given besides the user's words, checked by
what reaches the model on the OpenAI wire (`wire`: conftest): the system message's role
block, instruction tags, ``build_context``, ``system_message_role``, ``{name}``
placeholders (``resolve_in_context``), ``dependencies`` (functions called as each run
starts, ``add_dependencies_to_context``), ``metadata``, ``additional_input``,
``build_user_context``, ``send_media_to_model``, ``input_schema``, the location line, and
the run's own arguments (``run_id``, ``dependencies``, ``run_context``, hooks'
keywords)."""

from __future__ import annotations

import io
import json
from typing import TypedDict

import pytest
from ferrule.agent import Agent
from ferrule.media import Image
from ferrule.models.message import Message
from ferrule.models.openai import OpenAIChat
from ferrule.run import RunContext
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing.loopback import LoopbackServer, Reply
from PIL import Image as PillowImage
from pydantic import BaseModel


def png() -> bytes:
    buffer = io.BytesIO()
    PillowImage.new("RGB", (2, 2), (200, 10, 10)).save(buffer, format="PNG")
    return buffer.getvalue()


def system_of(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] in ("system", "developer"))


def user_texts(body: dict) -> list[str]:
    out = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        out.append(content if isinstance(content, str) else content[0].get("text", ""))
    return out


def model() -> OpenAIChat:
    return OpenAIChat(id="gpt-4o")


def test_role_and_instructions_without_tags_by_default(wire):
    wire.says("Ok.", "Ok.")
    agent = Agent(
        model=model(),
        description="You help travellers.",
        role="Trip planner",
        instructions=["Be brief.", "Name one city."],
    )
    agent.run("Where to?")
    system = system_of(wire.last)
    assert system.startswith("You help travellers.\n\n<your_role>\nTrip planner\n</your_role>")
    assert "- Be brief.\n- Name one city." in system and "<instructions>" not in system
    agent.use_instruction_tags = True
    agent.run("Where to?")
    assert "<instructions>\n- Be brief.\n- Name one city.\n</instructions>" in system_of(wire.last)


def test_build_context_false_sends_no_system_message(wire):
    wire.says("Ok.")
    Agent(model=model(), instructions="Never sent.", build_context=False).run("Hi")
    assert [m["role"] for m in wire.last["messages"]] == ["user"]


def test_system_message_role_and_an_agno_message_as_system_message(wire):
    wire.says("Ok.", "Ok.")
    Agent(model=model(), instructions="Be kind.", system_message_role="user").run("Hi")
    assert [m["role"] for m in wire.last["messages"]] == ["user", "user"]
    given = Message(role="system", content="You are {name}.")
    agent = Agent(model=model(), system_message=given, session_state={"name": "Ada"})
    agent.run("Hi")
    assert wire.last["messages"][0] == {"role": "system", "content": "You are Ada."}
    with pytest.raises(InvalidInputError) as refused:
        Agent(model=model(), system_message_role="tool")
    assert refused.value.errors[0]["path"] == "system_message_role"


def test_placeholders_filled_from_state_dependencies_metadata_and_user(wire):
    wire.says("Ok.", "Ok.")
    agent = Agent(
        model=model(),
        instructions="Help {user_id} in {city} for {plan}; keep {unknown} as is.",
        session_state={"city": "Lyon"},
        dependencies={"plan": "gold"},
        metadata={"team": "ops"},
    )
    agent.run("Hi from {city}, team {team}", user_id="ada")
    assert "Help ada in Lyon for gold; keep {unknown} as is." in system_of(wire.last)
    assert user_texts(wire.last) == ["Hi from Lyon, team ops"]
    agent.resolve_in_context = False
    agent.run("Hi from {city}")
    assert "Help {user_id} in {city}" in system_of(wire.last)
    assert user_texts(wire.last) == ["Hi from {city}"]


def test_dependencies_are_resolved_and_added_after_the_users_message(wire):
    wire.says("Ok.", "Ok.")
    seen = {}

    def profile(agent, run_context):
        seen["agent"], seen["run_id"] = agent, run_context.run_id
        return {"name": "Ada", "tier": 2}

    async def weather():
        return "sunny"

    agent = Agent(
        model=model(),
        dependencies={"profile": profile, "weather": weather, "static": 1},
        add_dependencies_to_context=True,
    )
    output = agent.run("Plan my day", run_id="run-1", dependencies={"static": 2})
    assert output.run_id == "run-1" and seen == {"agent": agent, "run_id": "run-1"}
    (text,) = user_texts(wire.last)
    assert text.startswith("Plan my day\n\n<additional context>\n")
    block = text.split("<additional context>\n")[1].split("\n</additional context>")[0]
    assert json.loads(block) == {
        "profile": {"name": "Ada", "tier": 2},
        "weather": "sunny",
        "static": 2,
    }
    assert agent.dependencies["profile"] is profile  # the agent's own are left as they were
    agent.run("Again", add_dependencies_to_context=False)
    assert user_texts(wire.last) == ["Again"]


def test_tools_read_the_resolved_dependencies_from_the_run_context(wire):
    def lookup(run_context: RunContext) -> str:
        """Look the user's plan up."""
        return f"plan={run_context.dependencies['plan']}"

    wire.calls("lookup")
    wire.says("Gold.")
    agent = Agent(model=model(), tools=[lookup], dependencies={"plan": lambda: "gold"})
    assert agent.run("Which plan?").content == "Gold."
    assert "plan=gold" in wire.text_sent(-1)


def test_a_given_run_context_is_the_runs_context(wire):
    wire.says("Ok.")
    context = RunContext(
        run_id="ctx-run",
        session_id="ctx-session",
        user_id="bo",
        session_state={"step": 1},
        dependencies={"topic": "tea"},
        metadata={"source": "cli"},
    )
    agent = Agent(model=model(), instructions="Talk about {topic} at step {step}.")
    output = agent.run("Hi", run_context=context)
    assert (output.run_id, output.session_id, output.user_id) == ("ctx-run", "ctx-session", "bo")
    assert output.metadata == {"source": "cli"}
    assert "Talk about tea at step 1." in system_of(wire.last)
    assert context.session_state is output.session_state


def test_metadata_of_the_agent_merges_over_the_runs(wire):
    wire.says("Ok.")
    agent = Agent(model=model(), metadata={"env": "prod", "tags": {"a": 1}})
    output = agent.run("Hi", metadata={"env": "dev", "request": 7, "tags": {"b": 2}})
    assert output.metadata == {"env": "prod", "request": 7, "tags": {"b": 2, "a": 1}}


def test_additional_input_comes_after_the_system_message(wire):
    wire.says("Ok.")
    agent = Agent(
        model=model(),
        instructions="Answer like the examples.",
        additional_input=[
            Message(role="user", content="2+2?"),
            {"role": "assistant", "content": "4."},
            "3+3?",
        ],
    )
    agent.run("5+5?")
    roles = [(m["role"], m["content"]) for m in wire.last["messages"][1:]]
    assert roles == [
        ("user", "2+2?"),
        ("assistant", "4."),
        ("user", "3+3?"),
        ("user", "5+5?"),
    ]
    with pytest.raises(InvalidInputError) as refused:
        Agent(model=model(), additional_input=[object()]).run("x")
    assert refused.value.errors[0]["path"] == "additional_input[0]"


def test_build_user_context_false_sends_the_input_as_it_is(wire):
    wire.says("Ok.")
    agent = Agent(
        model=model(),
        dependencies={"city": "Lyon"},
        add_dependencies_to_context=True,
        build_user_context=False,
    )
    agent.run("In {city}?")
    assert user_texts(wire.last) == ["In {city}?"]


def test_send_media_to_model_false_keeps_images_for_hooks_only(wire):
    wire.says("Ok.")
    seen = []

    def hook(run_input):
        seen.extend(run_input.images or ())

    agent = Agent(model=model(), send_media_to_model=False, pre_hooks=[hook])
    agent.run("What is this?", images=[Image(content=png(), format="png")])
    assert "image" not in json.dumps(wire.last["messages"])
    assert len(seen) == 1


class Ticket(BaseModel):
    title: str
    priority: int


def test_input_schema_validates_each_input(wire):
    wire.says("Filed.", "Filed.")
    agent = Agent(model=model(), input_schema=Ticket)
    agent.run({"title": "Login fails", "priority": 1})
    assert json.loads(user_texts(wire.last)[0]) == {"title": "Login fails", "priority": 1}
    agent.run('{"title": "Slow page", "priority": 3}')
    assert json.loads(user_texts(wire.last)[0])["title"] == "Slow page"
    with pytest.raises(InvalidInputError) as refused:
        agent.run({"title": "No priority"})
    assert refused.value.errors[0]["path"] == "input" and "Ticket" in refused.value.message
    with pytest.raises(InvalidInputError, match="JSON"):
        agent.run("not json")
    with pytest.raises(InvalidInputError) as refused:
        Agent(model=model(), input_schema="Ticket")
    assert refused.value.errors[0]["path"] == "input_schema"


class Query(TypedDict):
    topic: str
    depth: int


def test_a_typeddict_input_schema_validates_each_input(wire):
    wire.says("Ok.")
    agent = Agent(model=model(), input_schema=Query)
    agent.run({"topic": "tides", "depth": 2})
    assert json.loads(user_texts(wire.last)[0]) == {"topic": "tides", "depth": 2}
    with pytest.raises(InvalidInputError) as refused:
        agent.run({"topic": "tides"})
    assert refused.value.errors[0]["path"] == "$.depth"  # the missing field, named


def test_run_keywords_reach_the_hooks_by_name(wire):
    wire.says("Ok.")
    seen = {}

    def hook(run_input, ticket, run_context):
        seen["ticket"], seen["run_id"] = ticket, run_context.run_id

    Agent(model=model(), pre_hooks=[hook]).run("Hi", ticket="T-7", run_id="r7")
    assert seen == {"ticket": "T-7", "run_id": "r7"}


def test_location_in_the_context_from_the_geolocation_service(wire, monkeypatch):
    with LoopbackServer() as geo:
        geo.script(
            Reply.json({"status": "success", "city": "Lyon", "region": "ARA", "country": "France"})
        )
        monkeypatch.setenv("FERRULE_LOCATION_URL", geo.url + "/json/")
        monkeypatch.setenv("FERRULE_HTTP_REQUEST_ALLOW", "127.0.0.1")
        wire.says("Ok.", "Ok.")
        agent = Agent(model=model(), add_location_to_context=True)
        agent.run("Where am I?")
        agent.run("And now?")  # looked up once
        assert len([r for r in geo.requests if r.method == "GET"]) == 1
    assert "- Your approximate location is: Lyon, ARA, France." in system_of(wire.last)


def test_location_left_out_when_the_lookup_fails(wire, monkeypatch):
    monkeypatch.setenv("FERRULE_LOCATION_URL", "http://127.0.0.1:9/json/")
    wire.says("Ok.")
    Agent(model=model(), add_location_to_context=True, instructions="Hi.").run("Where?")
    assert "location" not in system_of(wire.last)
