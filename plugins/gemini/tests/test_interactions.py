"""ferrule-gemini's Interactions component end to end: the installed plugin, defined in a
runtime, against a loopback server that speaks the Interactions wire, keeps interactions as
Google does (`ferrule_gemini.interactions_testing.InteractionsServer`) and refuses malformed
requests."""

from __future__ import annotations

import base64
import json
from typing import Any, ClassVar

import pytest
from ferrule import AsyncRuntime
from ferrule.testing import AgentConformance
from ferrule_gemini.interactions_testing import (
    InteractionsServer,
    call_step,
    error_body,
    image_step,
    stream_reply,
    text_step,
    thought_step,
    validator,
)
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import (
    AuthenticationError,
    ModelError,
    ModelNotFoundError,
    ProviderTimeoutError,
    UnsupportedContentError,
)
from ferrule_kit.testing import (
    Capabilities,
    LanguageModelConformance,
    LanguageModelUnderTest,
    fold,
    tiny_png,
)
from ferrule_kit.testing.loopback import Reply, server_fixture
from ferrule_kit.testing.providers import (
    USER,
    WEATHER,
    Failure,
    ProviderConformance,
    ProviderUnderTest,
    ProviderWire,
    Refusal,
)

KEY = "AIzaSyLOOPBACK-secret-interactions-0123456789"
MODEL = "gemini-3-flash-preview"
TYPE = "gemini_interactions_language_model"
SIG = base64.b64encode(b"\x12\x0a opaque thought signature").decode()
STATUSES = {401: "UNAUTHENTICATED", 503: "UNAVAILABLE"}


def pieces(texts: Any) -> list[Any]:
    """created, the output step's start, one delta a text, then its stop and the end."""
    created = {"id": "v1_pieces", "status": "in_progress", "model": MODEL}
    events: list[Any] = [
        {"event_type": "interaction.created", "interaction": created},
        {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}},
    ]
    events += [
        {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": t}}
        for t in texts
    ]
    usage = {"total_input_tokens": 5, "total_output_tokens": len(texts)}
    return [
        *events,
        {"event_type": "step.stop", "index": 0},
        {
            "event_type": "interaction.completed",
            "interaction": {**created, "status": "completed", "usage": usage},
        },
    ]


def streamed(events: Any, delay: float = 0.0) -> Reply:
    from ferrule_kit.testing.loopback import Pause

    paced: list[Any] = []
    for event in events:
        if paced and delay:
            paced.append(Pause(delay))
        paced.append(event)
    return stream_reply(paced)


WIRE = ProviderWire(
    pieces=pieces,
    stream=streamed,
    error=lambda status, message, headers: Reply.json(
        error_body(status, STATUSES[status], message), status=status, headers=headers
    ),
    not_json=b'event: step.delta\ndata: {"event_type": \n\n',
    opening=2,
)

server = server_fixture(validator)


@pytest.fixture
async def runtime():
    async with AsyncRuntime() as rt:
        yield rt


async def define(runtime, server, name="gi", **attributes) -> str:
    settings = {
        "model": MODEL,
        "api_key": KEY,
        "base_url": server.url + "/v1beta",
        "read_timeout": 0.5,
        "max_retries": 2,
        **attributes,
    }
    await runtime.define(TYPE, name, settings)
    return name


async def collect(runtime, name, inputs) -> list[dict[str, Any]]:
    return [i async for i in runtime.call_iter_method(name, "infer", inputs)]


def answering(*replies: list[dict[str, Any]]) -> tuple[InteractionsServer, list[list[Any]]]:
    """A server saying ``replies`` in turn; the conversations it saw, in a list."""
    seen: list[list[Any]] = []
    queue = list(replies)

    def respond(conversation, body):
        seen.append(list(conversation))
        return queue.pop(0)

    return InteractionsServer(respond), seen


def fold_to_message(items) -> dict[str, Any]:
    """A folded reply as the next request's assistant message (the wire shape)."""
    from ferrule_kit.content.messages import converter

    return converter.unstructure(fold(items).message())


# -- the model path ----------------------------------------------------------------------


async def test_create_streams_text_and_carries_the_interaction_id(server, runtime):
    store, _ = answering([text_step("Hello there.")])
    server.script(store)
    name = await define(runtime, server)
    items = await collect(
        runtime,
        name,
        {"messages": [{"role": "system", "content": "Be brief."}, USER], "temperature": 0.3},
    )
    reply = fold(items).message()
    assert reply.text == "Hello there." and items[-1]["finish_reason"] == "stop"
    interaction_id = next(iter(store.stored))
    assert [r.signature for r in reply.reasoning] == [f"interaction:{interaction_id}"]
    body = server.requests[0].json
    assert body["model"] == MODEL and body["stream"] is True
    assert body["system_instruction"] == "Be brief."
    assert body["input"] == [{"type": "user_input", "content": [{"type": "text", "text": "Hi"}]}]
    assert body["generation_config"] == {"temperature": 0.3}
    assert "previous_interaction_id" not in body
    assert items[-1]["usage"]["input_tokens"] == 11
    assert server.requests[0].headers["x-goog-api-key"] == KEY


async def test_a_conversation_continues_from_the_stored_interaction(server, runtime):
    store, seen = answering([text_step("Hi Alice.")], [text_step("You are Alice.")])
    server.script(store, store)
    name = await define(runtime, server)
    first = [{"role": "user", "content": "I am Alice."}]
    reply = fold_to_message(await collect(runtime, name, {"messages": first}))
    second = [*first, reply, {"role": "user", "content": "Who am I?"}]
    items = await collect(runtime, name, {"messages": second})
    assert fold(items).message().text == "You are Alice."
    body = server.requests[1].json
    assert body["previous_interaction_id"] == next(iter(store.stored))
    # only the new turn travels; the server holds the rest
    assert body["input"] == [
        {"type": "user_input", "content": [{"type": "text", "text": "Who am I?"}]}
    ]
    assert [s["type"] for s in seen[1]] == ["user_input", "model_output", "user_input"]


async def test_without_store_the_whole_conversation_travels(server, runtime):
    store, _ = answering([text_step("Hi.")], [text_step("Again.")])
    server.script(store, store)
    name = await define(runtime, server, store=False)
    first = [{"role": "user", "content": "Hello"}]
    reply = fold_to_message(await collect(runtime, name, {"messages": first}))
    await collect(runtime, name, {"messages": [*first, reply, {"role": "user", "content": "More"}]})
    body = server.requests[1].json
    assert body["store"] is False and "previous_interaction_id" not in body
    assert [s["type"] for s in body["input"]] == ["user_input", "model_output", "user_input"]
    assert store.stored == {}


async def test_an_unknown_previous_interaction_is_a_typed_error(server, runtime):
    server.script(InteractionsServer(lambda conversation, body: [text_step("x")]))
    name = await define(runtime, server, max_retries=0)
    gone = {
        "role": "assistant",
        "content": "old",
        "reasoning": [{"signature": "interaction:v1_gone"}],
    }
    with pytest.raises(ModelNotFoundError) as info:
        await collect(runtime, name, {"messages": [USER, gone, {"role": "user", "content": "?"}]})
    assert "v1_gone" in info.value.message


async def test_a_tool_round_trip(server, runtime):
    call = call_step("get_weather", {"city": "Paris"}, signature=SIG)
    store, seen = answering([thought_step("Need the weather.", SIG), call], [text_step("Sunny.")])
    server.script(store, store)
    name = await define(runtime, server)
    first = {"messages": [USER], "tools": [WEATHER], "reasoning": "low"}
    items = await collect(runtime, name, first)
    reply = fold(items).message()
    assert items[-1]["finish_reason"] == "tool_calls"
    (tool_call,) = reply.tool_calls
    assert (tool_call.id, tool_call.name, tool_call.arguments) == (
        call["id"],
        "get_weather",
        {"city": "Paris"},
    )
    assert reply.thinking == "Need the weather."
    body = server.requests[0].json
    assert body["tools"][0]["type"] == "function" and body["tools"][0]["name"] == "get_weather"
    assert body["generation_config"] == {"thinking_summaries": "auto", "thinking_level": "low"}
    result = {"role": "tool", "tool_call_id": call["id"], "content": '{"sky": "sunny"}'}
    second = {"messages": [USER, fold_to_message(items), result], "tools": [WEATHER]}
    assert fold(await collect(runtime, name, second)).message().text == "Sunny."
    body = server.requests[1].json
    assert body["input"] == [
        {
            "type": "function_result",
            "call_id": call["id"],
            "result": '{"sky": "sunny"}',
            "name": "get_weather",
        }
    ]
    assert seen[1][-1]["call_id"] == call["id"]


async def test_a_tool_round_trip_without_store_sends_signatures_back(server, runtime):
    call = call_step("get_weather", {"city": "Oslo"}, signature=SIG)
    store, _ = answering([thought_step("Think.", "dGhvdWdodA=="), call], [text_step("Cold.")])
    server.script(store, store)
    name = await define(runtime, server, store=False)
    items = await collect(runtime, name, {"messages": [USER], "tools": [WEATHER]})
    result = {"role": "tool", "tool_call_id": call["id"], "content": "cold"}
    await collect(
        runtime, name, {"messages": [USER, fold_to_message(items), result], "tools": [WEATHER]}
    )
    steps = server.requests[1].json["input"]
    assert [s["type"] for s in steps] == [
        "user_input",
        "thought",
        "function_call",
        "function_result",
    ]
    assert steps[1]["signature"] == "dGhvdWdodA==" and steps[2]["signature"] == SIG
    assert steps[2]["arguments"] == {"city": "Oslo"}


async def test_structured_output_sends_the_schema(server, runtime):
    store, _ = answering([text_step('{"title": "The Matrix"}')])
    server.script(store)
    name = await define(runtime, server, generation_config={"seed": 7}, service_tier="flex")
    schema = {"type": "object", "properties": {"title": {"type": "string"}}}
    items = await collect(runtime, name, {"messages": [USER], "output_schema": schema})
    assert fold(items).message().text == '{"title": "The Matrix"}'
    body = server.requests[0].json
    assert body["response_format"] == {
        "type": "text",
        "mime_type": "application/json",
        "schema": schema,
    }
    assert body["generation_config"] == {"seed": 7} and body["service_tier"] == "flex"


@pytest.mark.parametrize("background", [False, True])
async def test_a_drawn_image_comes_back_as_media(server, runtime, background):
    png = tiny_png()
    store, _ = answering([image_step(png, text="Here it is.")])
    store.background_polls = 0
    server.script(store, store)
    extra = {"background": True, "poll_interval": 0.01} if background else {}
    name = await define(runtime, server, response_modalities=["text", "image"], **extra)
    items = await collect(runtime, name, {"messages": [USER]})
    media = [part for item in items for part in item["message"].get("media", ())]
    assert fold(items).message().text == "Here it is."
    assert media == [
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
        }
    ]
    assert server.requests[0].json["response_modalities"] == ["text", "image"]


async def test_an_unknown_modality_names_the_field(server, runtime):
    with pytest.raises(InvalidInputError) as info:
        await define(runtime, server, response_modalities=["text", "smell"])
    assert info.value.errors[0]["path"].endswith("response_modalities[1]")


# -- the agent path: background interactions, polled --------------------------------------

AGENT = {
    "agent": "deep-research-preview-04-2026",
    "agent_config": {"type": "deep-research", "thinking_summaries": "auto"},
    "background": True,
    "poll_interval": 0.01,
}


async def test_a_background_interaction_is_polled_to_its_end(server, runtime):
    store, _ = answering([thought_step("Planning."), text_step("The report.")])
    store.background_polls = 2
    server.script(*[store] * 4)
    name = await define(runtime, server, **AGENT)
    items = await collect(runtime, name, {"messages": [{"role": "system", "content": "fmt"}, USER]})
    reply = fold(items).message()
    assert reply.text == "The report." and reply.thinking == "Planning."
    methods = [(r.method, r.path.rsplit("/", 1)[-1][:3]) for r in server.requests]
    assert methods == [("POST", "int"), ("GET", "v1_"), ("GET", "v1_"), ("GET", "v1_")]
    body = server.requests[0].json
    assert body["agent"] == AGENT["agent"] and "model" not in body
    assert body["background"] is True and body["store"] is True and "stream" not in body
    assert body["agent_config"] == AGENT["agent_config"]
    assert "system_instruction" not in body  # an agent takes no system prompt


async def test_a_background_interaction_that_fails_ends_with_one_typed_error(server, runtime):
    store, _ = answering([text_step("never seen")])
    store.background_fails = True
    server.script(store, store, store)
    name = await define(runtime, server, **AGENT)
    with pytest.raises(ModelError) as info:
        await collect(runtime, name, {"messages": [USER]})
    assert "could not finish the task" in info.value.message
    assert KEY not in info.value.message


async def test_a_background_interaction_waits_no_longer_than_max_wait(server, runtime):
    store, _ = answering([text_step("late")])
    store.background_polls = 1000
    server.script(*[store] * 20)
    name = await define(runtime, server, **{**AGENT, "max_wait": 0.05})
    with pytest.raises(ProviderTimeoutError) as info:
        await collect(runtime, name, {"messages": [USER]})
    assert "did not end within 0.05s" in info.value.message
    assert 1 < len(server.requests) < 20


async def test_the_stream_ends_with_the_error_event_typed(server, runtime):
    events = [
        *pieces(["partial"])[:3],
        {"event_type": "error", "error": {"code": 401, "message": "key expired", "status": "X"}},
    ]
    server.script(stream_reply(events))
    name = await define(runtime, server)
    items: list[Any] = []
    with pytest.raises(AuthenticationError) as info:
        async for item in runtime.call_iter_method(name, "infer", {"messages": [USER]}):
            items.append(item)
    assert info.value.details["mid_stream"] is True and fold(items).message().text == "partial"


# -- bad input ---------------------------------------------------------------------------


async def test_bad_attributes_name_the_field(server, runtime):
    with pytest.raises(InvalidInputError) as info:
        await define(runtime, server, service_tier="fastest")
    assert "service_tier" in str(info.value.errors)


@pytest.mark.parametrize(
    ("attributes", "field"),
    [
        ({"agent": "deep-research-x", "store": False}, "store"),
        ({"agent_config": {"type": "deep-research"}}, "agent_config"),
        ({"environment": "remote"}, "environment"),
    ],
)
async def test_agent_settings_that_cannot_hold_name_the_field(server, runtime, attributes, field):
    with pytest.raises(InvalidInputError) as info:
        await define(runtime, server, **attributes)
    assert info.value.errors[0]["path"].endswith(field)


async def test_too_many_stop_sequences_name_the_field(server, runtime):
    name = await define(runtime, server)
    with pytest.raises(InvalidInputError) as info:
        await collect(runtime, name, {"messages": [USER], "stop": list("abcdef")})
    assert info.value.errors[0]["path"] == "$.stop" and server.requests == []


# -- what every provider does alike: faults, retries, keys ---------------------------------


class TestInteractionsProvider(ProviderConformance):
    KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    REFUSED: ClassVar[dict[str, Refusal]] = {
        "image-url": (
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            UnsupportedContentError,
            ("Gemini", "URL"),
        ),
    }
    RETRYABLE: ClassVar[dict[str, Reply]] = {
        "503": Reply.json(error_body(503, "UNAVAILABLE", "overloaded"), status=503),
        "reset-before-first-byte": Reply.reset(),
    }
    TERMINAL: ClassVar[dict[str, Failure]] = {
        "400": (
            Reply.json(error_body(400, "INVALID_ARGUMENT", "input is invalid"), status=400),
            ModelError,
            "input is invalid",
        ),
    }

    @pytest.fixture
    async def provider(self, server, runtime):
        return await ProviderUnderTest.define(
            runtime, server, WIRE, TYPE, MODEL, KEY, path="/v1beta"
        )


# -- the language-model contract: the sdk's conformance suites ----------------------------

STATUS_OF = {"stop": "completed", "tool_calls": "requires_action", "length": "incomplete"}


def scripted_events(turn) -> list[Any]:
    """A turn of the suites as the Interactions API streams it: a thought step of the
    reasoning pieces, an output step of the text pieces, a function-call step a call."""
    created = {"id": "v1_turn", "status": "in_progress", "model": MODEL}
    events: list[Any] = [{"event_type": "interaction.created", "interaction": created}]
    index = 0

    def step(start, deltas):
        nonlocal index
        events.append({"event_type": "step.start", "index": index, "step": start})
        events.extend(
            {"event_type": "step.delta", "index": index, "delta": delta} for delta in deltas
        )
        events.append({"event_type": "step.stop", "index": index})
        index += 1

    if turn.reasoning:
        summaries = [{"type": "text", "text": piece} for piece in turn.reasoning]
        step({"type": "thought"}, [{"type": "thought_summary", "content": s} for s in summaries])
    if turn.text:
        step({"type": "model_output"}, [{"type": "text", "text": t} for t in turn.text])
    for call in turn.tool_calls:
        arguments = (
            call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        )
        start = {"type": "function_call", "id": call.id, "name": call.name, "arguments": {}}
        step(start, [{"type": "arguments_delta", "arguments": arguments}])
    usage = {"total_input_tokens": 7, "total_output_tokens": 3}
    done = {**created, "status": STATUS_OF[turn.finish_reason], "usage": usage}
    return [*events, {"event_type": "interaction.completed", "interaction": done}]


class TestInteractionsConformance(LanguageModelConformance, AgentConformance):
    @pytest.fixture
    async def lm(self, server, runtime):
        name = await define(runtime, server, "gi_conformance", store=False)

        def script(turn, inputs) -> None:
            server.script(streamed(scripted_events(turn), delay=turn.chunk_delay))

        capabilities = Capabilities(reasoning=True, output_schema=True, images=True, audio=True)
        return LanguageModelUnderTest(runtime, name, capabilities, script=script)


class TestStoredInteractionsConformance(TestInteractionsConformance):
    """The same, each later turn continuing the stored interaction (only its new messages)."""

    @pytest.fixture
    async def lm(self, server, runtime):
        name = await define(runtime, server, "gi_stored")

        def script(turn, inputs) -> None:
            server.script(streamed(scripted_events(turn), delay=turn.chunk_delay))

        capabilities = Capabilities(reasoning=True, output_schema=True, images=True, audio=True)
        return LanguageModelUnderTest(runtime, name, capabilities, script=script)
