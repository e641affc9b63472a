"""`/v1/responses` of `ferrule serve` (OpenAI's Responses API), driven by the official
`openai` client against a real server on a loopback port: plain and streamed replies
(the raw events and the client's own stream helper, which checks their order),
function tools with a round trip of their outputs, reasoning with its signature, limits,
structured output and every kind of failure.

Models come through the route hooks, as in production: ``test`` is ferrule-testmodel's
echoing model; the plugin below routes a few more ids to scripted test models and to a
small component that signs its reasoning.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import attrs
import openai
import pytest
from ferrule.server import ServerThread
from ferrule.server.responses_wire import responses_request_from_openai
from ferrule_kernel import Kernel, hookimpl
from ferrule_kit import kit_plugin
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import InferInput, Usage, finish, reasoning_delta, text_delta
from ferrule_kit.models.lmspec import ModelRoute, language_model_type
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.timeout(60)

TOKEN = "responses-test-token-0123456789"
WEATHER_CALL = {"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "call_weather"}
WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "strict": True,
}
SIGNATURE = "opaque-signature-abc123"


@attrs.frozen
class NoAttributes:
    pass


class SigningModel:
    """Reasons with a signature (as Anthropic's and Gemini's models do), then answers."""

    def __init__(self, attributes: NoAttributes) -> None:
        self.requests: list[InferInput] = []

    async def infer(self, inputs: InferInput):
        self.requests.append(inputs)
        yield reasoning_delta("Let me think.")
        yield reasoning_delta(signature=SIGNATURE)
        yield text_delta("Thought through.")
        yield finish("stop", Usage(5, 7, 3))


def scripted(*turns: Any) -> ModelRoute:
    return ModelRoute("test_language_model", {"turns": list(turns)})


class ResponsesModelsPlugin:
    @hookimpl
    def ferrule_register_component_types(self):
        return [language_model_type("signing_lm", SigningModel, NoAttributes)]

    @hookimpl
    def ferrule_resolve_local_model(self, model_id: str):
        return {
            "weather-bot": scripted(
                {"tool_calls": [WEATHER_CALL]},
                {"text": "It is 3 degrees in Oslo."},
                {"tool_calls": [WEATHER_CALL]},
                {"text": "Still 3 degrees."},
            ),
            "failing": scripted(*[{"text": "partial answer", "error": "backend exploded"}] * 4),
            "misconfigured": scripted({"text": 42}),
            "signing": ModelRoute("signing_lm", {}),
        }.get(model_id)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Kernel]]:
    kernel = Kernel(plugins=[kit_plugin, ResponsesModelsPlugin()])
    with ServerThread(kernel, token=TOKEN) as url:
        yield url, kernel


@pytest.fixture(scope="module")
def client(server) -> openai.OpenAI:
    url, _ = server
    return openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0)


def requests_seen(kernel: Kernel, model: str) -> list[InferInput]:
    return kernel.component(f"chat:{model}").requests


def events_of(stream: Any) -> list[Any]:
    events = list(stream)
    assert [e.sequence_number for e in events] == list(range(len(events)))
    return events


# -- replies ------------------------------------------------------------------------------------


def test_a_plain_response(client, server):
    _, kernel = server
    response = client.responses.create(
        model="test", input="hello there friend", instructions="Be brief.", temperature=0.5
    )
    assert response.id.startswith("resp_") and response.object == "response"
    assert (response.status, response.model, response.error) == ("completed", "test", None)
    assert response.output_text == "hello there friend"
    [message] = response.output
    assert (message.type, message.role, message.status) == ("message", "assistant", "completed")
    assert message.id.startswith("msg_")
    [part] = message.content
    assert (part.type, part.text, part.annotations) == ("output_text", "hello there friend", [])
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (5, 3, 8)
    assert usage.output_tokens_details.reasoning_tokens == 0
    assert (response.instructions, response.temperature, response.tool_choice) == (
        "Be brief.",
        0.5,
        "auto",
    )
    seen = requests_seen(kernel, "test")[-1]
    assert [(m.role, m.text) for m in seen.messages] == [
        ("system", "Be brief."),
        ("user", "hello there friend"),
    ]
    assert seen.temperature == 0.5 and seen.reasoning is False


def test_input_items_become_the_conversation(client, server):
    _, kernel = server
    client.responses.create(
        model="test",
        input=[
            {"role": "developer", "content": "Answer in French."},
            {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Bonjour", "annotations": []}],
            },
            {"type": "message", "role": "user", "content": "How are you?"},
        ],
    )
    seen = requests_seen(kernel, "test")[-1]
    assert [(m.role, m.text) for m in seen.messages] == [
        ("system", "Answer in French."),
        ("user", "Hi"),
        ("assistant", "Bonjour"),
        ("user", "How are you?"),
    ]


def test_a_streamed_response_sends_the_documented_events(client):
    events = events_of(client.responses.create(model="test", input="one two three", stream=True))
    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    created, completed = events[0].response, events[-1].response
    assert created.status == "in_progress" and created.output == []
    assert created.id == completed.id and completed.status == "completed"
    item_id = events[2].item.id
    assert all(e.item_id == item_id for e in events[3:9])
    assert "".join(e.delta for e in events[4:7]) == "one two three" == events[7].text
    assert events[9].item.content[0].text == "one two three"
    assert completed.output_text == "one two three" and completed.usage.total_tokens == 6


def test_the_clients_stream_helper_assembles_the_same_response(client):
    with client.responses.stream(model="test", input="assembled by the client") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text == "assembled by the client"
    plain = client.responses.create(model="test", input="assembled by the client")
    assert [o.model_dump(exclude={"id"}, exclude_none=True) for o in final.output] == [
        o.model_dump(exclude={"id"}, exclude_none=True) for o in plain.output
    ]


def test_an_assistants_items_in_a_row_are_one_turn():
    def call(call_id: str) -> dict[str, Any]:
        return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}

    def said(text: str) -> dict[str, Any]:
        return {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": text}
        ]}  # fmt: skip

    request = responses_request_from_openai(
        {
            "model": "test",
            "input": [
                {"role": "user", "content": "Hi"},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Hm."}]},
                said("Let me look."),
                call("a"),
                call("b"),
                {"type": "function_call_output", "call_id": "a", "output": "1"},
                {"type": "function_call_output", "call_id": "b", "output": "2"},
                {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "Both."}]},
                said("1 and 2."),
                said("Anything else?"),
            ],
        }
    )
    messages = [Message.from_dict(m) for m in request.inputs["messages"]]
    assert [(m.role, m.text, [r.text for r in m.reasoning]) for m in messages] == [
        ("user", "Hi", []),
        ("assistant", "Let me look.", ["Hm."]),
        ("tool", "1", []),
        ("tool", "2", []),
        ("assistant", "1 and 2.", ["Both."]),
        ("assistant", "Anything else?", []),
    ]
    assert [c.id for c in messages[1].tool_calls] == ["a", "b"]


# -- tools --------------------------------------------------------------------------------------


def test_function_tools_round_trip(client, server):
    _, kernel = server
    conversation: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    first = client.responses.create(model="weather-bot", input=conversation, tools=[WEATHER_TOOL])
    [call] = first.output
    assert (call.type, call.call_id, call.name, call.status) == (
        "function_call",
        "call_weather",
        "get_weather",
        "completed",
    )
    assert json.loads(call.arguments) == {"city": "Oslo"} and call.id.startswith("fc_")
    assert first.output_text == "" and first.tools[0].name == "get_weather"
    [tool] = requests_seen(kernel, "weather-bot")[-1].tools
    assert (tool.function.name, tool.function.parameters) == (
        "get_weather",
        WEATHER_TOOL["parameters"],
    )

    conversation += [
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"type": "function_call_output", "call_id": call.call_id, "output": '{"celsius": 3}'},
    ]
    second = client.responses.create(model="weather-bot", input=conversation, tools=[WEATHER_TOOL])
    assert second.output_text == "It is 3 degrees in Oslo."
    assistant, result = requests_seen(kernel, "weather-bot")[-1].messages[1:]
    assert assistant.role == "assistant" and assistant.tool_calls[0].arguments == {"city": "Oslo"}
    assert (result.role, result.tool_call_id, result.text) == (
        "tool",
        "call_weather",
        '{"celsius": 3}',
    )


def test_tool_choice_required_and_named_force_a_call(client):
    news = {"type": "function", "name": "get_news", "parameters": {"type": "object",
            "properties": {"topic": {"type": "string"}}}}  # fmt: skip
    forced = client.responses.create(
        model="test", input="Oslo", tools=[WEATHER_TOOL, news], tool_choice="required"
    )
    [call] = forced.output
    assert (call.type, call.name, json.loads(call.arguments)) == (
        "function_call",
        "get_weather",
        {"city": "Oslo"},
    )
    named = client.responses.create(
        model="test",
        input="Oslo",
        tools=[WEATHER_TOOL, news],
        tool_choice={"type": "function", "name": "get_news"},
    )
    assert [(c.name, json.loads(c.arguments)) for c in named.output] == [
        ("get_news", {"topic": "Oslo"})
    ]
    assert named.tool_choice.name == "get_news"  # repeated as it was sent


def test_a_streamed_function_call(client):
    with client.responses.stream(
        model="weather-bot", input="Weather in Oslo?", tools=[WEATHER_TOOL]
    ) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    assert kinds[2] == "response.output_item.added" and events[2].item.type == "function_call"
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    [done] = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert "".join(deltas) == done.arguments and json.loads(done.arguments) == {"city": "Oslo"}
    assert kinds[-2:] == ["response.output_item.done", "response.completed"]
    [call] = final.output
    assert (call.type, call.call_id, call.arguments) == (
        "function_call",
        "call_weather",
        done.arguments,
    )
    # the next turn of the script, to keep the module's model in step
    client.responses.create(model="weather-bot", input="again")


# -- reasoning, limits, structured output ----------------------------------------------------------


def test_reasoning_is_asked_for_and_streamed(client, server):
    _, kernel = server
    events = events_of(
        client.responses.create(
            model="test", input="think it over", reasoning={"effort": "low"}, stream=True
        )
    )
    assert requests_seen(kernel, "test")[-1].reasoning == "low"
    added = [e.item.type for e in events if e.type == "response.output_item.added"]
    assert added == ["reasoning", "message"]
    thought = "".join(e.delta for e in events if e.type == "response.reasoning_text.delta")
    assert thought == "The user wrote 3 words; I repeat them."
    final = events[-1].response
    reasoning = final.output[0]
    assert reasoning.content[0].text == thought and reasoning.summary == []
    assert final.reasoning.effort == "low"
    assert final.usage.output_tokens_details.reasoning_tokens == 8
    client.responses.create(model="test", input="no thinking", reasoning={"effort": "none"})
    assert requests_seen(kernel, "test")[-1].reasoning is False


def test_reasoning_signatures_travel_as_encrypted_content(client, server):
    _, kernel = server
    plain = client.responses.create(model="signing", input="Hi")
    assert plain.output[0].type == "reasoning" and plain.output[0].encrypted_content is None
    first = client.responses.create(
        model="signing", input="Hi", include=["reasoning.encrypted_content"]
    )
    reasoning, message = first.output
    assert message.content[0].text == "Thought through."
    assert reasoning.encrypted_content == SIGNATURE
    assert reasoning.content[0].text == "Let me think."
    items = [item.model_dump(exclude_none=True) for item in first.output]
    client.responses.create(
        model="signing",
        input=[{"role": "user", "content": "Hi"}, *items, {"role": "user", "content": "And?"}],
    )
    assistant = kernel.component("chat:signing").requests[-1].messages[1]
    assert assistant.role == "assistant" and assistant.text == "Thought through."
    [part] = assistant.reasoning
    assert (part.text, part.signature) == ("Let me think.", SIGNATURE)


def test_max_output_tokens_makes_an_incomplete_response(client, server):
    _, kernel = server
    response = client.responses.create(
        model="test", input="one two three four", max_output_tokens=2
    )
    assert requests_seen(kernel, "test")[-1].max_tokens == 2
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output_text == "one two" and response.output[0].status == "incomplete"
    events = events_of(
        client.responses.create(
            model="test", input="one two three", max_output_tokens=1, stream=True
        )
    )
    assert events[-1].type == "response.incomplete"


def test_text_format_json_schema_is_the_output_schema(client, server):
    _, kernel = server
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    response = client.responses.create(
        model="test",
        input="Oslo",
        text={"format": {"type": "json_schema", "name": "place", "schema": schema}},
    )
    assert json.loads(response.output_text) == {"city": "Oslo"}
    assert requests_seen(kernel, "test")[-1].output_schema == schema
    assert response.text.format.type == "json_schema"


# -- failures -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "param", "message"),
    [
        ({"previous_response_id": "resp_1"}, "previous_response_id", "nothing is stored"),
        ({"extra_body": {"frobnicate": True}}, "frobnicate", "Unrecognized request argument"),
        ({"tools": [{"type": "web_search"}]}, "tools[0].type", "only function tools"),
        ({"tool_choice": "required"}, "tool_choice", "no tools were given"),
        ({"tools": [WEATHER_TOOL], "tool_choice": {"type": "mcp"}}, "tool_choice", "expected"),
        ({"reasoning": {"effort": "extreme"}}, "reasoning.effort", "expected one of"),
        ({"text": {"format": {"type": "xml"}}}, "text.format.type", "expected 'text'"),
        ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0]", "nothing is stored"),
        ({"input": [{"type": "web_search_call"}]}, "input[0].type", "not supported"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_text", "text": 42}]}]},
            "input[0].content[0].text",
            "expected string",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "f"}]}]},
            "input[0].content[0].file_id",
            "not fetched",
        ),
        (
            {"input": [{"type": "function_call_output", "output": "3"}]},
            "input[0].call_id",
            "tool call of this id",
        ),
        (
            {
                "input": [
                    {"role": "user", "content": "Hi"},
                    {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{oops"},
                ]
            },
            "input[1].arguments",
            "not valid JSON",
        ),
        ({"input": []}, "input", "must not be empty"),
        ({"max_output_tokens": 0}, "max_output_tokens", "at least 1"),
    ],
)
def test_bad_requests_get_400_naming_the_parameter(client, options, param, message):
    body = {"model": "test", "input": "Hi", **options}
    with pytest.raises(openai.BadRequestError, match=message) as info:
        client.responses.create(**body)
    assert info.value.body["param"] == param


def test_unknown_model_is_404(client):
    with pytest.raises(openai.NotFoundError) as info:
        client.responses.create(model="no-such-model", input="Hi")
    assert info.value.body["param"] == "model"


def test_a_failure_before_the_first_item_gets_an_error_status(client):
    with pytest.raises(openai.InternalServerError, match="could not be set up"):
        client.responses.create(model="misconfigured", input="Hi", stream=True)


def test_a_failure_mid_stream_is_a_failed_response(client):
    with pytest.raises(openai.InternalServerError, match="backend exploded"):
        client.responses.create(model="failing", input="Hi")
    events = events_of(client.responses.create(model="failing", input="Hi", stream=True))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "partial answer"
    failed = events[-1]
    assert failed.type == "response.failed" and failed.response.status == "failed"
    assert failed.response.error.code == "server_error"
    assert "backend exploded" in failed.response.error.message


def test_a_wrong_token_is_401(server):
    url, _ = server
    wrong = openai.OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.responses.create(model="test", input="Hi")


# -- any body ------------------------------------------------------------------------------------

texts = st.text(max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
parts = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["input_text", "output_text", "refusal", "input_image", "input_file", "x"]
        ),
        "text": json_values,
        "refusal": json_values,
        "image_url": json_values,
        "file_id": json_values,
        "file_data": json_values,
        "filename": json_values,
    },
)
items = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["message", "function_call", "function_call_output", "reasoning", "item_reference"]
        )
        | texts,
        "role": st.sampled_from(["user", "assistant", "system", "developer"]) | json_values,
        "content": texts | st.lists(parts, max_size=3) | json_values,
        "call_id": json_values,
        "name": json_values,
        "arguments": json_values,
        "output": texts | st.lists(parts, max_size=2) | json_values,
        "summary": st.lists(parts, max_size=2) | json_values,
        "encrypted_content": json_values,
    },
)
# well-formed items, so that many bodies get a response
valid_items = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, st.text(min_size=1, max_size=12)),
    st.builds(
        lambda t: {"role": "assistant", "content": [{"type": "output_text", "text": t}]}, texts
    ),
    st.builds(
        lambda t: {"type": "reasoning", "summary": [{"type": "summary_text", "text": t}]}, texts
    ),
    st.builds(
        lambda c: {"type": "function_call", "call_id": c, "name": "f", "arguments": "{}"}, texts
    ),
    st.builds(lambda c: {"type": "function_call_output", "call_id": c, "output": "3"}, texts),
)


def mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``valid`` three times in four, else any JSON value."""
    return st.one_of(valid, valid, valid, json_values)


bodies = st.fixed_dictionaries(
    # models that answer any number of requests (a scripted one runs out of turns)
    {"model": st.sampled_from(["test", "signing", "no-such-model"])},
    optional={
        "input": st.one_of(
            mostly(st.text(min_size=1, max_size=12)),
            mostly(st.lists(valid_items, min_size=1, max_size=4)),
            st.lists(items | valid_items, max_size=4),
        ),
        "instructions": mostly(texts),
        "stream": mostly(st.booleans()),
        "tools": mostly(
            st.lists(
                st.fixed_dictionaries(
                    {"type": st.just("function"), "name": st.sampled_from(["f", "g"])},
                    optional={"parameters": json_values, "description": mostly(texts)},
                ),
                max_size=2,
            )
        ),
        "reasoning": mostly(
            st.fixed_dictionaries(
                {}, optional={"effort": st.sampled_from(["none", "low", "high"]) | json_values}
            )
        ),
        "text": mostly(
            st.sampled_from(
                [
                    {"format": {"type": "text"}},
                    {"format": {"type": "json_object"}},
                    {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object"}}},
                ]
            )
        ),
        "max_output_tokens": mostly(st.integers(min_value=1, max_value=20)),
        "temperature": mostly(st.floats(min_value=0, max_value=2)),
        "include": mostly(st.just(["reasoning.encrypted_content"])),
        "metadata": json_values,
    },
)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies)
def test_any_body_gets_a_response_or_an_openai_error_never_a_500(server, body):
    url, _ = server
    request = urllib.request.Request(
        f"{url}/v1/responses",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            status, content_type, data = (
                answer.status,
                answer.headers["Content-Type"],
                answer.read(),
            )
    except urllib.error.HTTPError as exc:
        status, content_type, data = exc.code, exc.headers["Content-Type"], exc.read()
    event(f"status {status}")  # --hypothesis-show-statistics
    assert status < 500, (status, data[:300])
    if status >= 400:
        assert set(json.loads(data)["error"]) == {"message", "type", "param", "code"}
    elif content_type.startswith("text/event-stream"):
        events = [
            json.loads(chunk.split(b"\ndata: ", 1)[1]) for chunk in data.split(b"\n\n") if chunk
        ]
        assert [e["sequence_number"] for e in events] == list(range(len(events)))
        assert events[-1]["type"] in ("response.completed", "response.incomplete")
    else:
        assert json.loads(data)["status"] in ("completed", "incomplete")
