"""``/v1/messages`` and ``/v1/messages/count_tokens`` of `ferrule serve`: Anthropic's
Messages API over any backend, driven by the official ``anthropic`` client against a
real server on a loopback port, and by raw HTTP where the wire itself is the point
(event order, error shapes, auth headers, the gate).

``test`` is ferrule-testmodel's echoing model; the plugin below routes a few more ids to
scripted test models."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from ferrule.server import ServerThread
from ferrule_document import DocumentPart
from ferrule_image import ImagePart
from ferrule_kernel import Kernel, hookimpl
from ferrule_kit import kit_plugin
from ferrule_kit.models.lm import InferInput, PromptCache
from ferrule_kit.models.lmspec import ModelRoute
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.timeout(60)

TOKEN = "anthropic-route-token-0123456789"
MAX_BODY = 256 * 1024
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
WEATHER_CALL = {"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "toolu_weather"}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
NEWS_TOOL = {
    "name": "get_news",
    "input_schema": {"type": "object", "properties": {"topic": {"type": "string"}}},
}
USER = [{"role": "user", "content": "hello there friend"}]


def scripted(*turns: Any) -> ModelRoute:
    return ModelRoute("test_language_model", {"turns": list(turns)})


class ScriptedModels:
    @hookimpl
    def ferrule_resolve_local_model(self, model_id: str):
        return {
            "weather-bot": scripted(
                {"tool_calls": [WEATHER_CALL]}, {"text": "It is 3 degrees in Oslo."}
            ),
            "weather-stream": scripted({"tool_calls": [WEATHER_CALL], "chunk_size": 4}),
            "signed": scripted({"reasoning": "Deep thought.", "text": "42"}),
            "counted": scripted({"text": "the only turn"}),
            "failing": scripted(*[{"text": "partial answer", "error": "backend exploded"}] * 4),
        }.get(model_id)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Kernel]]:
    kernel = Kernel(plugins=[kit_plugin, ScriptedModels()])
    with ServerThread(kernel, token=TOKEN, max_body_size=MAX_BODY) as url:
        yield url, kernel


@pytest.fixture(scope="module")
def client(server) -> anthropic.Anthropic:
    url, _ = server
    return anthropic.Anthropic(base_url=url, api_key=TOKEN, max_retries=0)


def seen(kernel: Kernel, model: str) -> InferInput:
    return kernel.component(f"chat:{model}").requests[-1]


def raw(
    url: str, path: str, body: Any, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}{path}", data=data, method="POST")
    request.add_header("Content-Type", "application/json")
    for name, value in (headers if headers is not None else {"x-api-key": TOKEN}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def events(payload: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Server-sent events as (event name, data), checking the two agree."""
    out = []
    for block in payload.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        data = json.loads(lines["data"])
        assert data["type"] == lines["event"]
        out.append((lines["event"], data))
    return out


# -- replies ---------------------------------------------------------------------------


def test_a_plain_message(client):
    message = client.messages.create(model="test", max_tokens=100, messages=USER)
    assert (message.type, message.role, message.model) == ("message", "assistant", "test")
    assert message.id.startswith("msg_")
    [block] = message.content
    assert (block.type, block.text) == ("text", "hello there friend")
    assert (message.stop_reason, message.stop_sequence) == ("end_turn", None)
    assert (message.usage.input_tokens, message.usage.output_tokens) == (3, 3)


def test_system_prompt_stop_sequences_and_max_tokens(client, server):
    _, kernel = server
    stopped = client.messages.create(
        model="test",
        max_tokens=100,
        system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        messages=USER,
        stop_sequences=["there"],
        extra_body={"temperature": 0.5, "top_p": 0.9},  # this client version has no argument
    )
    assert stopped.content[0].text == "hello "
    request = seen(kernel, "test")
    assert (request.messages[0].role, request.messages[0].text) == ("system", "Be brief.")
    assert (request.stop, request.temperature, request.top_p) == (["there"], 0.5, 0.9)
    cut = client.messages.create(model="test", max_tokens=2, messages=USER)
    assert (cut.content[0].text, cut.stop_reason) == ("hello there", "max_tokens")


def test_the_stop_sequence_that_ended_the_reply(client, server):
    """As Anthropic answers: ``stop_reason: "stop_sequence"`` and the string that matched
    (the one that cut the reply earliest), in a reply and at the end of a stream."""
    stops = ["friend", "there", "goodbye"]
    stopped = client.messages.create(
        model="test", max_tokens=100, messages=USER, stop_sequences=stops
    )
    assert stopped.content[0].text == "hello "
    assert (stopped.stop_reason, stopped.stop_sequence) == ("stop_sequence", "there")
    with client.messages.stream(
        model="test", max_tokens=100, messages=USER, stop_sequences=stops
    ) as stream:
        final = stream.get_final_message()
    assert (final.content[0].text, final.stop_reason, final.stop_sequence) == (
        "hello ",
        "stop_sequence",
        "there",
    )
    url, _ = server
    body = {"model": "test", "max_tokens": 100, "messages": USER, "stream": True}
    status, _, payload = raw(url, "/v1/messages", {**body, "stop_sequences": ["friend"]})
    assert status == 200
    [delta] = [data for name, data in events(payload) if name == "message_delta"]
    assert delta["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": "friend"}
    unmatched = client.messages.create(
        model="test", max_tokens=100, messages=USER, stop_sequences=["goodbye"]
    )
    assert (unmatched.stop_reason, unmatched.stop_sequence) == ("end_turn", None)


def test_the_stop_sequence_anthropic_names_comes_through(monkeypatch):
    """Served by ferrule-anthropic: the stop string Anthropic's upstream reply names is
    the one ferrule's reply names."""
    pytest.importorskip(
        "ferrule_anthropic", reason="the Anthropic provider plugin is not installed"
    )
    from ferrule.runtime import new_kernel
    from ferrule_anthropic.testing import message_events, stream_reply
    from ferrule_kit.testing.loopback import LoopbackServer

    upstream = LoopbackServer()
    upstream.start_in_thread()
    try:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-upstream-0123456789")
        upstream.script(
            stream_reply(
                message_events(text=["1, 2, "], stop_reason="stop_sequence", stop_sequence="3")
            )
        )
        with ServerThread(new_kernel()) as url:
            near = anthropic.Anthropic(base_url=url, api_key="none", max_retries=0)
            reply = near.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=50,
                messages=[{"role": "user", "content": "Count to five."}],
                stop_sequences=["3", "4"],
            )
        assert (reply.content[0].text, reply.stop_reason, reply.stop_sequence) == (
            "1, 2, ",
            "stop_sequence",
            "3",
        )
        assert upstream.requests[0].json["stop_sequences"] == ["3", "4"]
        upstream.check()
    finally:
        upstream.stop_in_thread()


def test_thinking_blocks_come_back_and_go_back(client, server):
    _, kernel = server
    reply = client.messages.create(
        model="test",
        max_tokens=2048,
        messages=USER,
        thinking={"type": "enabled", "budget_tokens": 1024},
    )
    thinking, text = reply.content
    assert (thinking.type, thinking.thinking, thinking.signature) == (
        "thinking",
        "The user wrote 3 words; I repeat them.",
        "",  # a local model signs nothing
    )
    assert seen(kernel, "test").reasoning is True
    # put back as the client got it, with a provider's signed and redacted blocks beside it
    assistant = [
        thinking.model_dump(),
        {"type": "thinking", "thinking": "Earlier.", "signature": "c2lnbmVk"},
        {"type": "redacted_thinking", "data": "b3BhcXVl"},
        text.model_dump(),
    ]
    client.messages.create(
        model="test",
        max_tokens=100,
        messages=[*USER, {"role": "assistant", "content": assistant}, *USER],
        thinking={"type": "adaptive"},
        output_config={"effort": "low"},
    )
    request = seen(kernel, "test")
    assert request.reasoning == "low"
    reasoning = request.messages[1].reasoning
    assert [(p.text, p.signature) for p in reasoning] == [
        ("The user wrote 3 words; I repeat them.", None),
        ("Earlier.", "c2lnbmVk"),
        ("", "redacted_thinking:b3BhcXVl"),
    ]


def test_a_stream_is_anthropics_event_sequence(server):
    url, _ = server
    body = {
        "model": "test",
        "max_tokens": 100,
        "messages": USER,
        "stream": True,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    status, headers, payload = raw(url, "/v1/messages", body)
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    got = events(payload)
    names = [name for name, _ in got]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    starts = [d["content_block"]["type"] for n, d in got if n == "content_block_start"]
    assert starts == ["thinking", "text"]
    deltas = [d["delta"] for n, d in got if n == "content_block_delta"]
    assert (
        "".join(d.get("thinking", "") for d in deltas) == "The user wrote 3 words; I repeat them."
    )
    assert "".join(d.get("text", "") for d in deltas) == "hello there friend"
    assert [d["index"] for n, d in got if n == "content_block_stop"] == [0, 1]
    start = got[0][1]["message"]
    assert (start["content"], start["stop_reason"]) == ([], None)
    final = got[-2][1]
    assert final["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert final["usage"]["output_tokens"] == 11


def test_the_clients_stream_helper_assembles_the_message(client):
    with client.messages.stream(model="test", max_tokens=100, messages=USER) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "hello there friend" == final.content[0].text
    assert final.stop_reason == "end_turn"


# -- tools -----------------------------------------------------------------------------


def test_tools_round_trip(client, server):
    _, kernel = server
    messages: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    first = client.messages.create(
        model="weather-bot", max_tokens=100, messages=messages, tools=[WEATHER_TOOL]
    )
    assert first.stop_reason == "tool_use"
    [call] = first.content
    assert (call.type, call.id, call.name, call.input) == (
        "tool_use",
        "toolu_weather",
        "get_weather",
        {"city": "Oslo"},
    )
    request = seen(kernel, "weather-bot")
    assert request.tools[0].function.parameters == WEATHER_TOOL["input_schema"]
    messages += [
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call.id, "content": "3 degrees"},
                {"type": "text", "text": "Thanks."},
            ],
        },
    ]
    second = client.messages.create(
        model="weather-bot", max_tokens=100, messages=messages, tools=[WEATHER_TOOL]
    )
    assert second.content[0].text == "It is 3 degrees in Oslo."
    assistant, result, user = seen(kernel, "weather-bot").messages[1:]
    assert assistant.tool_calls[0].arguments == {"city": "Oslo"}
    assert (result.role, result.tool_call_id, result.text) == ("tool", "toolu_weather", "3 degrees")
    assert (user.role, user.text) == ("user", "Thanks.")


def test_a_streamed_tool_use(client):
    with client.messages.stream(
        model="weather-stream", max_tokens=100, messages=USER, tools=[WEATHER_TOOL]
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()
    assert kinds.count("input_json") > 1  # the input arrives as partial JSON
    [call] = final.content
    assert (call.name, call.input, final.stop_reason) == (
        "get_weather",
        {"city": "Oslo"},
        "tool_use",
    )


def test_tool_choice_any_tool_and_none(client, server):
    _, kernel = server
    tools = [WEATHER_TOOL, NEWS_TOOL]
    options = {"model": "test", "max_tokens": 100, "tools": tools}
    messages = [{"role": "user", "content": "Oslo"}]
    forced = client.messages.create(messages=messages, tool_choice={"type": "any"}, **options)
    assert [(b.name, b.input) for b in forced.content] == [("get_weather", {"city": "Oslo"})]
    named = client.messages.create(
        messages=messages, tool_choice={"type": "tool", "name": "get_news"}, **options
    )
    assert [(b.name, b.input) for b in named.content] == [("get_news", {"topic": "Oslo"})]
    assert seen(kernel, "test").forced_tool == "get_news"
    client.messages.create(messages=messages, tool_choice={"type": "none"}, **options)
    assert seen(kernel, "test").tools == []


# -- content ---------------------------------------------------------------------------


def test_images_and_documents_reach_the_backend(client, server):
    _, kernel = server
    content = [
        {"type": "text", "text": "What are these?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {
            "type": "document",
            "title": "notes.txt",
            "source": {"type": "text", "media_type": "text/plain", "data": "The notes."},
        },
    ]
    reply = client.messages.create(
        model="test", max_tokens=100, messages=[{"role": "user", "content": content}]
    )
    assert reply.content[0].text == "What are these?"
    _, image, document = seen(kernel, "test").messages[0].contents
    assert isinstance(image, ImagePart) and (image.mime_type, image.data) == ("image/png", PNG)
    assert isinstance(document, DocumentPart) and document.filename == "notes.txt"
    assert base64.b64decode(document.data) == b"The notes."


def test_count_tokens_asks_the_models_own_count_and_generates_nothing(client, server):
    _, kernel = server
    request = {"messages": USER, "system": "Be brief.", "tools": [WEATHER_TOOL]}
    counted = client.messages.count_tokens(model="counted", **request)
    assert counted.input_tokens == 5  # the test model's count: words of every message
    model = kernel.component("chat:counted")
    assert not model.requests  # no infer: the script's one turn is still there
    reply = client.messages.create(model="counted", max_tokens=50, **request)
    assert reply.content[0].text == "the only turn"
    assert reply.usage.input_tokens == counted.input_tokens


def test_count_tokens_on_the_offline_model_is_its_tokenizers_and_decodes_nothing(client, server):
    """llama.cpp counts the prompt it would read (system prompt and tools included): the
    count a real run reports, with no token generated for it."""
    pytest.importorskip("ferrule_llamacpp", reason="the llama.cpp backend is not installed")
    pytest.importorskip("ferrule_smollm2", reason="the SmolLM2 weights package is not installed")
    from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL

    _, kernel = server
    request = {"messages": USER, "system": "Be brief.", "tools": [WEATHER_TOOL]}
    client.messages.count_tokens(model=DEFAULT_LOCAL_MODEL, messages=USER)  # defines it
    model = kernel.component(f"chat:{DEFAULT_LOCAL_MODEL}")
    generated = model.generated_tokens
    counted = client.messages.count_tokens(model=DEFAULT_LOCAL_MODEL, **request)
    bare = client.messages.count_tokens(model=DEFAULT_LOCAL_MODEL, messages=USER)
    assert model.generated_tokens == generated
    assert counted.input_tokens > bare.input_tokens > 0
    reply = client.messages.create(model=DEFAULT_LOCAL_MODEL, max_tokens=1, **request)
    assert reply.usage.input_tokens == counted.input_tokens
    assert model.generated_tokens == generated + 1  # the run's one token, and only it


def test_count_tokens_on_anthropic_is_anthropics_count_endpoint(monkeypatch):
    """Served by ferrule-anthropic: the upstream gets a count_tokens request (free), not a
    Messages one (billed), and its count is the answer."""
    pytest.importorskip(
        "ferrule_anthropic", reason="the Anthropic provider plugin is not installed"
    )
    from ferrule.runtime import new_kernel
    from ferrule_anthropic.testing import count_reply, validator
    from ferrule_kit.testing.loopback import LoopbackServer

    upstream = LoopbackServer(validate=validator)
    upstream.start_in_thread()
    try:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-upstream-0123456789")
        upstream.script(count_reply(123))
        with ServerThread(new_kernel()) as url:
            near = anthropic.Anthropic(base_url=url, api_key="none", max_retries=0)
            counted = near.messages.count_tokens(
                model="claude-sonnet-4-6", messages=USER, system="Be brief.", tools=[WEATHER_TOOL]
            )
        assert counted.input_tokens == 123
        upstream.check()
        (sent,) = upstream.requests
        assert sent.path == "/v1/messages/count_tokens"
        assert (sent.json["system"], sent.json["tools"][0]["name"]) == ("Be brief.", "get_weather")
    finally:
        upstream.stop_in_thread()


def test_count_tokens_without_the_method_runs_one_token(monkeypatch):
    """A model whose type has no count_tokens (ferrule-openai: Chat Completions has no
    count endpoint) is counted as before: one generation call for one token, its usage's
    prompt tokens the answer."""
    pytest.importorskip("ferrule_openai", reason="the OpenAI provider plugin is not installed")
    from ferrule.runtime import new_kernel
    from ferrule_kit.testing import chat_completions
    from ferrule_kit.testing.conformance import ScriptedTurn
    from ferrule_kit.testing.loopback import LoopbackServer

    upstream = LoopbackServer(validate=chat_completions.validator())
    upstream.start_in_thread()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{upstream.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-upstream-0123456789")
        usage = {"prompt_tokens": 17, "completion_tokens": 1, "total_tokens": 18}
        upstream.script(chat_completions.reply(ScriptedTurn(text=("Hi",)), usage=usage))
        with ServerThread(new_kernel()) as url:
            near = anthropic.Anthropic(base_url=url, api_key="none", max_retries=0)
            counted = near.messages.count_tokens(model="gpt-4o", messages=USER)
        assert counted.input_tokens == 17
        upstream.check()
        (sent,) = upstream.requests
        assert sent.path == "/v1/chat/completions"
        assert sent.json.get("max_completion_tokens", sent.json.get("max_tokens")) == 1
    finally:
        upstream.stop_in_thread()


# -- create()'s newer keys: cache_control, speed, diagnostics -------------------------------


def test_cache_control_speed_and_diagnostics_are_accepted_and_reach_the_backend(client, server):
    # anthropic 2.14's create() sends these at the top level; the test model takes them
    # and changes nothing (it has no cache, one speed)
    _, kernel = server
    message = client.messages.create(
        model="test",
        max_tokens=10,
        messages=USER,
        cache_control={"type": "ephemeral", "ttl": "1h"},
        speed="fast",
        diagnostics={"previous_message_id": None},
    )
    assert message.content[0].text == "hello there friend"
    assert message.diagnostics is None  # no earlier prompt kept to compare with
    request = seen(kernel, "test")
    assert (request.prompt_cache, request.speed) == (PromptCache("1h"), "fast")
    client.messages.create(
        model="test", max_tokens=10, messages=USER, cache_control={"type": "ephemeral"}
    )
    assert seen(kernel, "test").prompt_cache == PromptCache("5m")  # Anthropic's default
    plain = client.messages.create(model="test", max_tokens=10, messages=USER, speed=None)
    assert plain.content[0].text == "hello there friend"
    assert (seen(kernel, "test").prompt_cache, seen(kernel, "test").speed) == (None, None)
    counted = client.messages.count_tokens(
        model="test", messages=USER, cache_control={"type": "ephemeral"}, speed="standard"
    )
    assert counted.input_tokens == 3


def test_cache_control_and_speed_go_on_to_anthropic(monkeypatch):
    """Served by ferrule-anthropic, the request's cache_control (Anthropic's automatic
    prompt caching) and speed travel on to the upstream, which validates them as Anthropic
    documents them; so do a count's."""
    pytest.importorskip(
        "ferrule_anthropic", reason="the Anthropic provider plugin is not installed"
    )
    from ferrule.runtime import new_kernel
    from ferrule_anthropic.testing import count_reply, message_events, stream_reply, validator
    from ferrule_kit.testing.loopback import LoopbackServer

    upstream = LoopbackServer(validate=validator)
    upstream.start_in_thread()
    try:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-upstream-0123456789")
        upstream.script(
            stream_reply(message_events(text=["Cached."], stop_reason="end_turn")),
            count_reply(42),
            stream_reply(message_events(text=["Plain."], stop_reason="end_turn")),
        )
        request = {"model": "claude-sonnet-4-6", "messages": USER, "system": "Be brief."}
        with ServerThread(new_kernel()) as url:
            near = anthropic.Anthropic(base_url=url, api_key="none", max_retries=0)
            reply = near.messages.create(
                max_tokens=64,
                cache_control={"type": "ephemeral", "ttl": "1h"},
                speed="fast",
                diagnostics={"previous_message_id": "msg_earlier"},
                **request,
            )
            counted = near.messages.count_tokens(cache_control={"type": "ephemeral"}, **request)
            plain = near.messages.create(max_tokens=64, **request)
        assert (reply.content[0].text, counted.input_tokens) == ("Cached.", 42)
        assert plain.content[0].text == "Plain."
        upstream.check()  # every request as Anthropic documents it
        sent, count, bare = (r.json for r in upstream.requests)
        assert sent["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
        assert sent["speed"] == "fast"
        assert "diagnostics" not in sent  # its message ids are this server's, not Anthropic's
        assert count["cache_control"] == {"type": "ephemeral", "ttl": "5m"}
        assert "cache_control" not in bare and "speed" not in bare
    finally:
        upstream.stop_in_thread()


# -- auth, the gate and errors ----------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{"x-api-key": TOKEN}, {"Authorization": f"Bearer {TOKEN}"}],
    ids=["x-api-key", "bearer"],
)
def test_the_token_as_either_header(server, headers):
    url, _ = server
    body = {"model": "test", "max_tokens": 10, "messages": USER}
    status, _, _ = raw(url, "/v1/messages", body, headers)
    assert status == 200


@pytest.mark.parametrize("headers", [{}, {"x-api-key": "wrong"}, {"Authorization": "Bearer x"}])
def test_a_missing_or_wrong_token_is_401_in_anthropics_shape(server, headers):
    url, _ = server
    status, _, payload = raw(url, "/v1/messages", {"model": "test"}, headers)
    assert status == 401
    assert json.loads(payload) == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }


def test_a_page_of_another_site_is_refused(server):
    url, _ = server
    headers = {"x-api-key": TOKEN, "Origin": "https://evil.example"}
    status, _, payload = raw(url, "/v1/messages", {"model": "test"}, headers)
    assert status == 403 and json.loads(payload)["error"]["type"] == "permission_error"


def test_the_body_limit_is_413(server):
    url, _ = server
    body = {
        "model": "test",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "x" * MAX_BODY}],
    }
    status, _, payload = raw(url, "/v1/messages", body)
    assert status == 413 and json.loads(payload)["error"]["type"] == "request_too_large"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_tokens": None}, "max_tokens: Field required"),
        ({"messages": []}, "messages: at least one message"),
        ({"messages": [{"role": "system", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": []}]}, "messages[0].content: a user message"),
        ({"messages": "hi"}, "messages: expected an array"),
        (
            {"tools": [{"type": "web_search_20250305", "name": "web"}]},
            "tools[0].type: server tools",
        ),
        ({"tool_choice": {"type": "any"}}, "tool_choice: forces a tool call"),
        ({"top_k": 5}, "top_k: not supported"),
        ({"frobnicate": 1}, "frobnicate: Extra inputs"),
        ({"cache_control": {"type": "persistent"}}, "cache_control.type"),
        ({"cache_control": {"type": "ephemeral", "ttl": "2h"}}, "cache_control.ttl"),
        ({"cache_control": {"type": "ephemeral", "scope": "x"}}, "cache_control.scope: Extra"),
        ({"cache_control": "ephemeral"}, "cache_control: expected an object"),
        ({"speed": "ludicrous"}, "speed: expected one of standard, fast"),
        ({"diagnostics": {"previous_message_id": 5}}, "diagnostics.previous_message_id"),
        ({"diagnostics": {"since": "msg_1"}}, "diagnostics.since: Extra inputs"),
        ({"temperature": 7}, "temperature"),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "image", "source": {"type": "file"}}]}
                ]
            },
            "messages[0].content[0].source.type",
        ),
    ],
)
def test_bad_requests_are_400_invalid_request_error_naming_the_field(client, options, message):
    arguments = {"model": "test", "max_tokens": 10, "messages": USER, **options}
    body = {k: v for k, v in arguments.items() if v is not None}
    with pytest.raises(anthropic.BadRequestError, match=message.replace("[", r"\[")) as info:
        client.post("/v1/messages", body=body, cast_to=object)
    assert info.value.body["type"] == "error"
    assert info.value.body["error"]["type"] == "invalid_request_error"


def test_a_wrong_method_is_405_in_anthropics_shape(server):
    url, _ = server
    request = urllib.request.Request(f"{url}/v1/messages", headers={"x-api-key": TOKEN})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request)
    assert info.value.code == 405
    assert json.loads(info.value.read())["error"]["type"] == "invalid_request_error"


def test_an_unknown_model_is_404(client):
    with pytest.raises(anthropic.NotFoundError, match="does not exist") as info:
        client.messages.create(model="no-such-model", max_tokens=10, messages=USER)
    assert info.value.body["error"]["type"] == "not_found_error"
    with pytest.raises(anthropic.NotFoundError, match="does not exist") as info:
        client.messages.count_tokens(model="no-such-model", messages=USER)
    assert info.value.body["error"]["type"] == "not_found_error"


def test_a_failure_mid_stream_is_an_error_event(server):
    url, _ = server
    body = {"model": "failing", "max_tokens": 100, "messages": USER, "stream": True}
    status, _, payload = raw(url, "/v1/messages", body)
    assert status == 200  # the headers had gone out with the first words
    got = events(payload)
    assert got[-1][0] == "error" and "backend exploded" in got[-1][1]["error"]["message"]
    assert got[-1][1]["error"]["type"] == "api_error"
    assert "message_stop" not in [name for name, _ in got]


def test_the_client_raises_on_a_mid_stream_error(client):
    with pytest.raises(anthropic.APIStatusError, match="backend exploded"):
        with client.messages.stream(model="failing", max_tokens=100, messages=USER) as stream:
            for _ in stream:
                pass


# -- any body --------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
words = st.text(st.characters(categories=["L"]), min_size=1, max_size=12)
blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": words}),
    st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": words, "content": words | json_values}
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_use"), "id": words, "name": words, "input": json_values}
    ),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": words, "signature": words}),
    st.dictionaries(st.sampled_from(["type", "source", "text", "data"]), json_values),
)
messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "user"]) | json_values,
            "content": words | st.lists(blocks, max_size=3) | json_values,
        }
    ),
    max_size=3,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.fixed_dictionaries(
        {"model": st.sampled_from(["test", "test", "no-such-model"]) | json_values},
        optional={
            "max_tokens": st.integers(-1, 50) | json_values,
            "messages": messages | json_values,
            "system": words | json_values,
            "tools": st.lists(
                st.fixed_dictionaries({"name": words, "input_schema": st.just({})}), max_size=2
            )
            | json_values,
            "tool_choice": st.fixed_dictionaries(
                {"type": st.sampled_from(["auto", "any", "tool", "none"]), "name": words}
            )
            | json_values,
            "thinking": st.fixed_dictionaries(
                {"type": st.sampled_from(["enabled", "adaptive", "disabled"])}
            )
            | json_values,
            "stop_sequences": st.lists(words, max_size=2) | json_values,
            "stream": st.booleans() | json_values,
        },
    ),
    count=st.booleans(),
)
def test_any_body_gets_a_reply_or_an_anthropic_error_never_a_500(server, body, count):
    url, _ = server
    path = "/v1/messages/count_tokens" if count else "/v1/messages"
    if count:
        body = {
            k: v for k, v in body.items() if k not in ("max_tokens", "stop_sequences", "stream")
        }
    status, _, payload = raw(url, path, body)
    event(f"status {status}")  # --hypothesis-show-statistics
    assert status < 500, (status, payload[:300])
    if status >= 400:
        reply = json.loads(payload)
        assert reply["type"] == "error" and set(reply["error"]) == {"type", "message"}
