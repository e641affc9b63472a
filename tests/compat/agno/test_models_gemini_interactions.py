"""`GeminiInteractions` in Agno-style programs, on the `wire` loopback (conftest) answered by
`ferrule_gemini.testing.InteractionsServer`, which keeps interactions as Google does: a
conversation continued by ``previous_interaction_id`` sends only its new turn, tools round
trip, structured output, streaming, and Deep Research polled in the background."""

from __future__ import annotations

import pytest
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.models.google import GeminiInteractions
from ferrule.run import RunStatus
from ferrule.tools import tool
from ferrule_gemini.testing import (
    InteractionsServer,
    call_step,
    image_step,
    text_step,
    thought_step,
)
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ModelError
from ferrule_kit.testing import tiny_png
from pydantic import BaseModel

DEEP_RESEARCH = "deep-research-preview-04-2026"


def server_saying(*replies):
    """An Interactions server answering ``replies`` in turn (each a list of steps), and
    the conversations it was asked to continue."""
    seen = []
    queue = list(replies)

    def respond(conversation, body):
        seen.append(list(conversation))
        return queue.pop(0)

    return InteractionsServer(respond), seen


def user_text(step):
    return step["content"][0]["text"]


def test_multi_turn_sends_only_the_new_turn(wire, tmp_path):
    store, seen = server_saying(
        [text_step("Nice to meet you, Alice.")],
        [text_step("You are Alice, and you love hiking.")],
    )
    wire.replies(store, store)
    agent = Agent(
        model=GeminiInteractions(id="gemini-3.5-flash"),
        add_history_to_context=True,
        db=SqliteDb(db_file=str(tmp_path / "data.db")),
        markdown=True,
    )
    agent.run("My name is Alice and I love hiking in the mountains.")
    run = agent.run("What did I just tell you about myself?")
    assert run.content == "You are Alice, and you love hiking."
    first, second = wire.bodies
    assert "previous_interaction_id" not in first
    assert second["previous_interaction_id"] == next(iter(store.stored))
    assert [user_text(s) for s in second["input"]] == ["What did I just tell you about myself?"]
    assert second["system_instruction"] == first["system_instruction"]  # interaction-scoped
    # the server answered from the whole conversation it kept
    assert [s["type"] for s in seen[1]] == ["user_input", "model_output", "user_input"]


def test_store_false_sends_the_whole_conversation(wire, tmp_path):
    store, _ = server_saying([text_step("Hello Bob.")], [text_step("Bob.")])
    wire.replies(store, store)
    agent = Agent(
        model=GeminiInteractions(store=False),
        add_history_to_context=True,
        db=SqliteDb(db_file=str(tmp_path / "data.db")),
    )
    agent.run("I am Bob.")
    agent.run("Who am I?")
    second = wire.bodies[1]
    assert second["store"] is False and "previous_interaction_id" not in second
    assert [s["type"] for s in second["input"]] == ["user_input", "model_output", "user_input"]


def test_tool_use_round_trips_through_the_stored_interaction(wire):
    calls = []

    @tool
    def get_weather(city: str) -> str:
        """The weather now in a city."""
        calls.append(city)
        return f"Sunny in {city}"

    call = call_step("get_weather", {"city": "Paris"})
    store, seen = server_saying([call], [text_step("It is sunny in Paris.")])
    wire.replies(store, store)
    run = Agent(model=GeminiInteractions(), tools=[get_weather]).run("Weather in Paris?")
    assert calls == ["Paris"] and run.content == "It is sunny in Paris."
    first, second = wire.bodies
    assert first["tools"][0]["name"] == "get_weather"
    assert second["previous_interaction_id"] in store.stored
    [result] = second["input"]
    assert result["type"] == "function_result" and result["call_id"] == call["id"]
    assert result["name"] == "get_weather" and "Sunny in Paris" in result["result"]
    assert seen[1][-2]["id"] == call["id"]  # the call the server kept


class MovieReview(BaseModel):
    title: str
    year: int


def test_structured_output(wire):
    store, _ = server_saying([text_step('{"title": "The Matrix", "year": 1999}')])
    wire.replies(store)
    run = Agent(model=GeminiInteractions(), output_schema=MovieReview).run("Review The Matrix")
    assert run.content == MovieReview(title="The Matrix", year=1999)
    response_format = wire.last["response_format"]
    assert response_format["mime_type"] == "application/json"
    assert response_format["schema"]["properties"]["year"]["type"] == "integer"


def test_thinking_streams_its_summary(wire):
    store, _ = server_saying([thought_step("Distance is speed times time."), text_step("330 mi")])
    wire.replies(store)
    agent = Agent(model=GeminiInteractions(thinking_level="high"))
    chunks = [event.content for event in agent.run("How far?", stream=True) if event.content]
    assert "".join(chunks) == "330 mi" and len(chunks) >= 2
    assert wire.last["generation_config"]["thinking_level"] == "high"
    assert wire.last["stream"] is True


def test_deep_research_is_polled_in_the_background(wire):
    store, _ = server_saying([thought_step("Planning the search."), text_step("The report.")])
    store.background_polls = 2
    wire.replies(*[store] * 4)
    model = GeminiInteractions(
        agent=DEEP_RESEARCH, thinking_summaries="auto", agent_poll_interval=0.01
    )
    run = Agent(model=model).run("Research solid-state batteries.")
    assert run.content == "The report."
    create, *polls = wire.server.requests
    assert create.json["agent"] == DEEP_RESEARCH and create.json["background"] is True
    assert create.json["agent_config"] == {"type": "deep-research", "thinking_summaries": "auto"}
    assert [p.method for p in polls] == ["GET"] * 3


def test_deep_research_that_fails_ends_the_run_with_the_providers_message(wire):
    store, _ = server_saying([text_step("never")])
    store.background_fails = True
    wire.replies(store, store, store)
    agent = Agent(model=GeminiInteractions(agent=DEEP_RESEARCH, agent_poll_interval=0.01))
    try:
        run = agent.run("Research it.")
    except ModelError as error:  # raised, or kept on the run as Agno's error status
        message = error.message
    else:
        assert run.status == RunStatus.error
        message = str(run.content)
    assert "could not finish the task" in message


@pytest.mark.parametrize(
    ("keywords", "field"),
    [
        ({"search": True}, "search"),
        ({"file_search_store_names": ["fileSearchStores/x"]}, "file_search_store_names"),
        ({"thinking_summaries": "auto"}, "thinking_summaries"),
        ({"agent": "antigravity-preview-05-2026", "visualization": "auto"}, "visualization"),
        ({"generation_config": "hot"}, "generation_config"),
        ({"agent": DEEP_RESEARCH, "store": False}, "store"),
    ],
)
def test_bad_or_refused_keywords_name_the_field(keywords, field):
    with pytest.raises(InvalidInputError) as info:
        GeminiInteractions(**keywords)
    assert info.value.errors[0]["path"].endswith(field)


def test_a_keyword_set_between_turns_applies_to_the_next_request(wire, tmp_path):
    store, _ = server_saying([text_step("A plan.")], [text_step("The report.")])
    wire.replies(*[store] * 6)  # each run: create, then read in progress, then done
    agent = Agent(
        model=GeminiInteractions(
            agent=DEEP_RESEARCH, collaborative_planning=True, agent_poll_interval=0.01
        ),
        add_history_to_context=True,
        db=SqliteDb(db_file=str(tmp_path / "collab.db")),
    )
    agent.run("Research TPUs.", session_id="collab")
    agent.model.collaborative_planning = False
    assert agent.run("Plan looks good!", session_id="collab").content == "The report."
    plan, execute = wire.bodies
    assert plan["agent_config"]["collaborative_planning"] is True
    assert execute["agent_config"]["collaborative_planning"] is False
    assert execute["previous_interaction_id"] in store.stored
    with pytest.raises(InvalidInputError):
        agent.model.visualization = "sometimes"
    with pytest.raises(AttributeError):
        agent.model.colaborative_planning = True  # a misspelt keyword is not taken


def test_image_generation_gives_the_runs_images(wire):
    png = tiny_png()
    store, _ = server_saying([image_step(png, text="A sunset over mountains.")])
    wire.replies(store)
    model = GeminiInteractions(
        id="gemini-3.1-flash-image-preview", response_modalities=["text", "image"]
    )
    run = Agent(model=model).run("Generate an image of a sunset over mountains")
    [image] = run.images
    assert image.get_content_bytes() == png and image.mime_type == "image/png"
    assert run.content == "A sunset over mountains."
    assert wire.last["response_modalities"] == ["text", "image"]
