"""`ferrule serve` against a hostile client and a careless plugin (issue 11): browser pages
(CSRF, DNS rebinding), bodies that are not JSON or nest without end, slow senders, output
JSON cannot carry, BaseExceptions outside any kernel request, error text, tokens, logs and
SIGTERM. docs/security.md says what each setting changes."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import math
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs
import pytest
from aiohttp import web
from ferrule import AsyncRuntime, Runtime
from ferrule.remote import RemoteError
from ferrule.server import ServerThread, check_bind, create_app
from ferrule.server.gate import MAX_JSON_DEPTH, Hosts, dumps
from ferrule_kernel import (
    FerruleError,
    InvalidOutputError,
    Kernel,
    OperatorSpec,
    hookimpl,
)
from ferrule_kernel import outputs as kernel_outputs
from ferrule_kit.models.lm import InferInput, finish, text_delta
from ferrule_kit.models.lmspec import ModelRoute, language_model_type

pytestmark = pytest.mark.timeout(60)

TOKEN = "hardening-token-0123456789abcdef"
STRONG = "Zq8vN3xP1rT6yW0kL5sJ9dF2gH7cB4mE"


# -- the plugin --------------------------------------------------------------------------


@attrs.frozen
class Text:
    text: str = ""


@attrs.frozen
class Nothing:
    pass


def say(inputs: Text) -> dict[str, Any]:
    return {"text": inputs.text}


def spell(inputs: Text) -> Iterator[dict[str, Any]]:
    for char in inputs.text:
        yield {"text": char}


def fail(inputs: Text) -> dict[str, Any]:
    raise RuntimeError(f"cannot open /srv/internal/db.sqlite for {inputs.text}")


def fail_oddly(inputs: Nothing) -> dict[str, Any]:
    raise FerruleError("odd details", thing=object(), ratio=math.nan, deep=[[[[[[[[[[[]]]]]]]]]]])


def nan_stream(inputs: Nothing) -> Iterator[dict[str, Any]]:
    yield {"x": 1.0}
    yield {"x": math.nan}


def odd(inputs: Nothing) -> dict[str, Any]:
    return {"text": "a\ud800"}  # a plugin's output JSON may carry, UTF-8 may not


def odd_stream(inputs: Nothing) -> Iterator[dict[str, Any]]:
    yield {"text": "\ud800"}
    yield {"text": "b"}


async def escape(inputs: Nothing) -> dict[str, Any]:
    # Past every request: a callback on the server's own loop.
    def raise_it() -> None:
        raise SystemExit(3)

    asyncio.get_running_loop().call_soon(raise_it)
    return {}


class Hang:
    """What the never-returning operators did."""

    started = threading.Event()
    cancelled = threading.Event()
    release = threading.Event()


async def hang(inputs: Nothing) -> dict[str, Any]:
    Hang.started.set()
    try:
        await asyncio.sleep(3600)
    finally:
        Hang.cancelled.set()
    return {}


async def block_loop(inputs: Nothing) -> dict[str, Any]:
    time.sleep(0.6)  # blocking code in an async plugin: the server's loop stops meanwhile
    return {}


def hang_sync(inputs: Nothing) -> dict[str, Any]:
    Hang.started.set()
    Hang.release.wait(30)  # a sync call cannot be interrupted: it holds its worker thread
    return {"released": True}


@attrs.frozen
class NoAttributes:
    pass


class EchoModel:
    """Answers with the last user message's text."""

    def __init__(self, attributes: NoAttributes) -> None:
        pass

    async def infer(self, inputs: InferInput):
        yield text_delta(inputs.messages[-1].text)
        yield finish("stop")


class OddModel:
    """Answers with a lone surrogate."""

    def __init__(self, attributes: NoAttributes) -> None:
        pass

    async def infer(self, inputs: InferInput):
        yield text_delta("\udfff!")
        yield finish("stop")


class EndlessModel:
    closed = threading.Event()

    def __init__(self, attributes: NoAttributes) -> None:
        pass

    async def infer(self, inputs: InferInput):
        try:
            while True:
                yield text_delta("tick ")
                await asyncio.sleep(0.005)
        finally:
            type(self).closed.set()


class HardeningPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [
            OperatorSpec("say", say, Text),
            OperatorSpec("odd", odd, Nothing),
            OperatorSpec("odd_stream", odd_stream, Nothing, streaming=True),
            OperatorSpec("spell", spell, Text, streaming=True),
            OperatorSpec("fail", fail, Text),
            OperatorSpec("fail_oddly", fail_oddly, Nothing),
            OperatorSpec("nan_stream", nan_stream, Nothing, streaming=True),
            OperatorSpec("escape", escape, Nothing),
            OperatorSpec("hang", hang, Nothing),
            OperatorSpec("hang_sync", hang_sync, Nothing),
            OperatorSpec("block_loop", block_loop, Nothing),
        ]

    @hookimpl
    def ferrule_register_component_types(self):
        return [
            language_model_type("echo_lm", EchoModel, NoAttributes),
            language_model_type("endless_lm", EndlessModel, NoAttributes),
            language_model_type("odd_lm", OddModel, NoAttributes),
        ]

    @hookimpl
    def ferrule_resolve_api_model(self, model_id: str, provider: str | None):
        if model_id == "exit-model":
            raise SystemExit(3)
        if model_id == "interrupt-model":
            raise KeyboardInterrupt
        return {
            "echo": ModelRoute("echo_lm", {}),
            "endless": ModelRoute("endless_lm", {}),
            "odd": ModelRoute("odd_lm", {}),
        }.get(model_id)


def hardening_kernel() -> Kernel:
    return Kernel(plugins=[HardeningPlugin()], load_entry_points=False)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with ServerThread(hardening_kernel()) as url:
        yield url


# -- raw HTTP (every header as given, Host included) ----------------------------------------


@attrs.frozen
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return strict_json(self.body)


def strict_json(data: bytes | str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(data, parse_constant=refuse)


def send(
    url: str,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return Answer(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
    finally:
        connection.close()


JSON = {"Content-Type": "application/json"}


def post(url: str, path: str, payload: Any, **headers: str) -> Answer:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return send(url, "POST", path, body, {**JSON, **headers})


CHAT = {"model": "echo", "messages": [{"role": "user", "content": "hi"}]}
#: Every POST route, with a body it accepts.
POSTS = {
    "/ferrule/v1/call": {"operator": "say", "inputs": {"text": "x"}},
    "/ferrule/v1/iter": {"operator": "spell", "inputs": {"text": "x"}},
    "/ferrule/v1/define": {"component_type": "echo_lm", "name": "m", "attrs": {}},
    "/ferrule/v1/call_method": {"name": "nope", "method": "infer", "inputs": {}},
    "/ferrule/v1/delete": {"name": "nope"},
    "/v1/chat/completions": CHAT,
}


# -- CSRF: bodies not sent as JSON ---------------------------------------------------------


@pytest.mark.parametrize("path", list(POSTS))
@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        ";0*",  # aiohttp's own parser fails on it: the check must not
    ],
)
def test_post_routes_refuse_bodies_not_sent_as_json(url, path, content_type):
    # What a page of any site can send without a CORS preflight.
    headers = {} if content_type is None else {"Content-Type": content_type}
    answer = send(url, "POST", path, json.dumps(POSTS[path]).encode(), headers)
    assert answer.status == 415
    error = answer.json()["error"]
    assert "application/json" in error["message"]
    assert error.get("kind", error.get("code")) == "unsupported_media_type"


def test_json_content_types_are_accepted(url):
    for content_type in ("application/json; charset=utf-8", "application/vnd.api+json"):
        answer = post(
            url, "/ferrule/v1/call", POSTS["/ferrule/v1/call"], **{"Content-Type": content_type}
        )
        assert (answer.status, answer.json()) == (200, {"output": {"text": "x"}})


# -- DNS rebinding: Host -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/ferrule/v1/call"),
        ("GET", "/ferrule/v1/operators"),
        ("POST", "/v1/chat/completions"),
        ("GET", "/v1/models"),
    ],
)
def test_a_host_name_the_server_does_not_answer_to_is_421(url, method, path):
    port = urlsplit(url).port
    body = json.dumps(POSTS.get(path, {})).encode() if method == "POST" else None
    for host in ("evil.example", f"evil.example:{port}", f"rebind.127.0.0.1.nip.io:{port}"):
        answer = send(url, method, path, body, {**JSON, "Host": host})
        assert answer.status == 421, host
        assert "--allowed-host" in answer.json()["error"]["message"]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"app.localhost:{port}"):
        assert send(url, method, path, body, {**JSON, "Host": host}).status == 200, host


def test_allowed_hosts_add_names_and_star_allows_any():
    with ServerThread(hardening_kernel(), allowed_hosts=["ferrule.internal"]) as url:
        good = {**JSON, "Host": "ferrule.internal:8080"}
        assert (
            send(
                url,
                "POST",
                "/ferrule/v1/call",
                json.dumps(POSTS["/ferrule/v1/call"]).encode(),
                good,
            ).status
            == 200
        )
        assert send(url, "GET", "/v1/models", None, {"Host": "other.internal"}).status == 421
    with ServerThread(hardening_kernel(), allowed_hosts=["*"]) as url:
        assert send(url, "GET", "/v1/models", None, {"Host": "anything.example"}).status == 200


def test_which_hosts_each_bind_answers_to():
    one_address = Hosts(bound="192.168.1.20")
    assert one_address.allows("192.168.1.20:8080") and one_address.allows("localhost:8080")
    assert not one_address.allows("10.0.0.1") and not one_address.allows("evil.example")
    every_address = Hosts(bound="0.0.0.0")
    assert every_address.allows("10.0.0.1:80") and every_address.allows("[fe80::1]:80")
    assert not every_address.allows("evil.example:80")
    assert Hosts(bound="::").allows("[2001:db8::1]") and not Hosts(bound="::").allows("a.b")
    loopback = Hosts(bound="127.0.0.1")
    assert loopback.allows("[::1]:1") and loopback.allows("127.0.0.2")
    assert not loopback.allows("192.168.1.20")
    named = Hosts(["api.example.com."], bound="0.0.0.0")
    assert named.allows("API.example.com:443") and not named.allows("example.com")


# -- CSRF: Origin, and CORS for allowed origins -----------------------------------------------


def test_pages_of_other_origins_are_refused(url):
    port = urlsplit(url).port
    for path, payload in (
        ("/ferrule/v1/call", POSTS["/ferrule/v1/call"]),
        ("/v1/chat/completions", CHAT),
    ):
        for origin in ("http://evil.example", "null", f"http://localhost:{port + 1}"):
            answer = post(url, path, payload, Origin=origin)
            assert answer.status == 403, (path, origin)
            assert "access-control-allow-origin" not in answer.headers
            assert "--allowed-origin" in answer.json()["error"]["message"]
        # a page the server itself served (a host app mounting the routes may serve one)
        assert post(url, path, payload, Origin=f"http://127.0.0.1:{port}").status == 200
    answer = send(url, "GET", "/ferrule/v1/operators", None, {"Origin": "http://evil.example"})
    assert answer.status == 403


def test_cors_for_an_allowed_origin_on_the_openai_routes():
    app = "https://app.example"
    with ServerThread(hardening_kernel(), allowed_origins=[app], token=TOKEN) as url:
        asked = "authorization, content-type, x-stainless-os"
        preflight = send(
            url,
            "OPTIONS",
            "/v1/chat/completions",
            None,
            {
                "Origin": app,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": asked,
            },
        )
        assert preflight.status == 204  # no token: a preflight never carries one
        assert preflight.headers["access-control-allow-origin"] == app
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert preflight.headers["access-control-allow-headers"] == asked
        assert preflight.headers["vary"] == "Origin"
        auth = {"Authorization": f"Bearer {TOKEN}", "Origin": app}
        reply = post(url, "/v1/chat/completions", CHAT, **auth)
        assert reply.status == 200 and reply.headers["access-control-allow-origin"] == app
        stream = post(url, "/v1/chat/completions", {**CHAT, "stream": True}, **auth)
        assert stream.status == 200 and stream.headers["access-control-allow-origin"] == app
        assert stream.body.endswith(b"data: [DONE]\n\n")
        models = send(url, "GET", "/v1/models/echo", None, auth)
        assert models.status == 200 and models.headers["access-control-allow-origin"] == app
        refused = post(url, "/v1/chat/completions", CHAT, Authorization=f"Bearer {TOKEN}")
        assert refused.status == 200 and "access-control-allow-origin" not in refused.headers
        unauthorized = post(url, "/v1/chat/completions", CHAT, Origin=app)
        # the page can read why (CORS on errors too), but gets nothing without the token
        assert unauthorized.status == 401
        assert unauthorized.headers["access-control-allow-origin"] == app
        evil = send(
            url,
            "OPTIONS",
            "/v1/chat/completions",
            None,
            {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
        assert evil.status == 403 and "access-control-allow-origin" not in evil.headers
        # The kernel protocol is offered to no page: no preflight, so no browser call.
        kernel_preflight = send(
            url,
            "OPTIONS",
            "/ferrule/v1/call",
            None,
            {"Origin": app, "Access-Control-Request-Method": "POST"},
        )
        assert kernel_preflight.status == 405
        assert "access-control-allow-origin" not in kernel_preflight.headers


# -- bodies: depth, and what the server sends ---------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_deeply_nested_bodies_are_refused_naming_the_depth(url, depth):
    nested = b"[" * depth + b"]" * depth
    kernel = post(
        url, "/ferrule/v1/call", b'{"operator": "say", "inputs": {"text": ' + nested + b"}}"
    )
    assert kernel.status == 422
    assert f"nested more than {MAX_JSON_DEPTH} levels" in kernel.json()["error"]["message"]
    chat = post(url, "/v1/chat/completions", b'{"model": "echo", "messages": ' + nested + b"}")
    assert chat.status == 400
    assert f"nested more than {MAX_JSON_DEPTH} levels" in chat.json()["error"]["message"]


def test_bodies_nested_to_the_limit_are_read(url):
    nested = b"[" * (MAX_JSON_DEPTH - 2) + b"]" * (MAX_JSON_DEPTH - 2)
    answer = post(
        url, "/ferrule/v1/call", b'{"operator": "say", "inputs": {"text": ' + nested + b"}}"
    )
    assert answer.status == 422 and "$.text" in answer.body.decode()  # the kernel's own check


def test_a_lone_surrogate_in_an_output_goes_out_escaped(url):
    answer = post(url, "/ferrule/v1/call", {"operator": "odd", "inputs": {}})
    assert answer.status == 200 and answer.body == b'{"output":{"text":"a\\ud800"}}'
    stream = post(url, "/ferrule/v1/iter", {"operator": "odd_stream", "inputs": {}})
    lines = [strict_json(line) for line in stream.body.splitlines()]
    assert lines == [{"item": {"text": "\ud800"}}, {"item": {"text": "b"}}, {"end": True}]
    chat = {"model": "odd", "messages": [{"role": "user", "content": "hi"}]}
    reply = post(url, "/v1/chat/completions", chat)
    assert reply.status == 200
    assert reply.json()["choices"][0]["message"]["content"] == "\udfff!"
    streamed = post(url, "/v1/chat/completions", {**chat, "stream": True})
    assert b"\\udfff!" in streamed.body and streamed.body.endswith(b"data: [DONE]\n\n")


#: A lone surrogate where each route reads text, escaped as JSON allows (issue 31, repr. 6).
SURROGATE_BODIES = {
    "/ferrule/v1/call": b'{"operator": "say", "inputs": {"text": "a\\ud800"}}',
    # a low surrogate alone (the fuzz on llama.cpp found the first check missed those)
    "/v1/chat/completions": b'{"model": "echo", "messages": [{"role": "user", "content": "a\\udfff"}]}',
    "/v1/messages": (
        b'{"model": "echo", "max_tokens": 5, "messages": [{"role": "user", "content": "a\\uDBFF"}]}'
    ),
    "/v1/messages/count_tokens": (
        b'{"model": "echo", "messages": [{"role": "user", "content": [{"type": "text", '
        b'"text": "a\\udc00"}]}], "system": "\\ud800"}'
    ),
    "/v1/responses": b'{"model": "echo", "input": "a\\ud800"}',
}


@pytest.mark.parametrize("path", list(SURROGATE_BODIES))
def test_a_lone_surrogate_in_a_request_becomes_a_replacement_character(url, path):
    """At the wire: no plugin ever sees one, so no backend can fail on it."""
    answer = post(url, path, SURROGATE_BODIES[path])
    assert answer.status == 200, answer.body
    text = answer.body.decode()
    assert "\\ud" not in text.lower()
    if path != "/v1/messages/count_tokens":
        assert "a\ufffd" in json.dumps(answer.json(), ensure_ascii=False)


def test_a_surrogate_pair_is_one_character_and_kept():
    from ferrule.server.gate import parse_json

    assert parse_json(b'["\\ud83d\\ude00", "\\ud83d", "x\\\\ud800"]') == [
        "\U0001f600",
        "\ufffd",
        "x\\ud800",
    ]


def test_the_server_encodes_strictly():
    assert dumps({"text": "\ud800é"}) == b'{"text":"\\ud800\\u00e9"}'
    assert dumps({"text": "é"}) == '{"text":"é"}'.encode()
    for value in ({"x": math.nan}, {"x": math.inf}, {"x": object()}, {"x": {1, 2}}):
        with pytest.raises(InvalidOutputError, match="cannot send this output as JSON"):
            dumps(value)


def test_output_the_kernel_let_through_ends_the_stream_with_one_error_line(url, monkeypatch):
    # The kernel checks outputs; if it ever let NaN through, the server still sends JSON.
    monkeypatch.setattr(kernel_outputs, "_json_problem", lambda value: None)
    stream = post(url, "/ferrule/v1/iter", {"operator": "nan_stream", "inputs": {}})
    lines = [strict_json(line) for line in stream.body.splitlines()]
    assert lines[0] == {"item": {"x": 1.0}} and len(lines) == 2
    assert lines[1]["error"]["kind"] == "invalid_output"


def test_an_error_with_details_json_cannot_carry_is_still_json(url):
    answer = post(url, "/ferrule/v1/call", {"operator": "fail_oddly", "inputs": {}})
    error = answer.json()["error"]  # strict: no NaN
    assert answer.status == 500 and error["message"] == "odd details"
    assert error["details"]["thing"] == "<object>" and error["details"]["ratio"] == "nan"


# -- BaseException outside any kernel request ---------------------------------------------------


@pytest.mark.parametrize("model", ["exit-model", "interrupt-model"])
def test_a_route_hook_raising_a_base_exception_ends_that_request_only(url, model):
    for _ in range(2):
        answer = post(url, "/v1/chat/completions", {**CHAT, "model": model})
        error = answer.json()["error"]
        assert answer.status == 500 and error["code"] == "plugin_error"
        assert f"routing model {model!r} failed in a plugin's route hook" in error["message"]
        assert send(url, "GET", f"/v1/models/{model}").status == 500
    assert (
        post(url, "/v1/chat/completions", CHAT).json()["choices"][0]["message"]["content"] == "hi"
    )


def test_a_plugin_callback_raising_on_the_servers_loop_does_not_stop_it(url):
    for _ in range(3):
        assert post(url, "/ferrule/v1/call", {"operator": "escape", "inputs": {}}).status == 200
        time.sleep(0.05)
        assert post(url, "/ferrule/v1/call", POSTS["/ferrule/v1/call"]).status == 200


async def test_a_call_that_never_returns_is_cancelled_when_its_client_gives_up(url):
    Hang.started.clear()
    Hang.cancelled.clear()
    async with AsyncRuntime(url=url) as rt:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(rt.call("hang", {}), 0.5)
        assert Hang.started.is_set()
        assert await asyncio.to_thread(Hang.cancelled.wait, 5)
        assert await rt.call("say", {"text": "x"}) == {"text": "x"}


def test_a_sync_call_that_never_returns_holds_only_its_own_thread(url):
    Hang.started.clear()
    Hang.release.clear()
    answers: list[Answer] = []
    waiting = threading.Thread(
        target=lambda: answers.append(post(url, "/ferrule/v1/call", {"operator": "hang_sync"}))
    )
    waiting.start()
    try:
        assert Hang.started.wait(5)
        assert post(url, "/ferrule/v1/call", POSTS["/ferrule/v1/call"]).status == 200
        stream = post(url, "/ferrule/v1/iter", POSTS["/ferrule/v1/iter"])
        assert stream.body.endswith(b'{"end":true}\n')
        assert post(url, "/v1/chat/completions", CHAT).status == 200
        assert waiting.is_alive()
    finally:
        Hang.release.set()
        waiting.join(10)
    assert answers[0].json() == {"output": {"released": True}}


def test_a_plugin_blocking_the_servers_loop_is_named_in_the_log(caplog, monkeypatch):
    monkeypatch.setenv("FERRULE_LOOP_STALL_SECONDS", "0.2")
    caplog.set_level(logging.WARNING, logger="ferrule")
    with ServerThread(hardening_kernel()) as url:
        assert post(url, "/ferrule/v1/call", {"operator": "block_loop", "inputs": {}}).status == 200
    stalls = [r for r in caplog.records if getattr(r, "ferrule_event", None) == "loop_stalled"]
    assert stalls and stalls[0].ferrule_fields["target"] == "operator 'block_loop'"


# -- OpenAI messages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "param"),
    [
        ({"role": "tool", "content": "3 degrees"}, "messages[1].tool_call_id"),
        ({"role": "user"}, "messages[1].content"),
        ({"role": "user", "content": None}, "messages[1].content"),
    ],
)
def test_chat_refuses_incomplete_messages_naming_the_field(url, message, param):
    first = {"role": "system", "content": "Be brief."}
    answer = post(url, "/v1/chat/completions", {"model": "echo", "messages": [first, message]})
    error = answer.json()["error"]
    assert answer.status == 400 and error["param"] == param
    assert error["type"] == "invalid_request_error" and error["message"].startswith(param)


STEP_TOOL = {"name": "add", "parameters": {"type": "object", "properties": {}}}


@pytest.mark.parametrize(
    ("tools", "path"),
    [
        ([{"function": "x"}], "$.tools[0].function"),
        ([{"function": 5}], "$.tools[0].function"),
        ([{"function": None}], "$.tools[0].function"),
        ([{"function": ["name", "x"]}], "$.tools[0].function"),
        (["add"], "$.tools[0]"),
        ([STEP_TOOL, 7], "$.tools[1]"),
        ([{"function": {"description": "no name"}}], "$.tools[0].function.name"),
        ([STEP_TOOL, {"function": {"name": 5}}], "$.tools[1].function.name"),
        ([{"function": {"name": ""}}], "$.tools[0].function.name"),
        ([{"function": {"name": "f", "parameters": "x"}}], "$.tools[0].function.parameters"),
        ([{"function": {"name": "f", "description": 3}}], "$.tools[0].function.description"),
        ([{"type": "retrieval", "function": STEP_TOOL}], "$.tools[0].type"),
        ([{"name": "f", "strict": True}], "$.tools[0].strict"),
        ([{"type": "function", "function": {"name": "f", "x": 1}}], "$.tools[0].function.x"),
        ([{"function": STEP_TOOL, "extra": 1}], "$.tools[0].extra"),
        ({"add": STEP_TOOL}, "$.tools"),
    ],
)
def test_agent_step_refuses_bad_tool_descriptions_naming_the_field(url, tools, path):
    defined = post(url, "/ferrule/v1/define_model", {"name": "step-lm", "model": "echo"})
    assert defined.status in (200, 409), defined.body  # 409: defined by an earlier case
    question = [{"role": "user", "content": "hi"}]
    answer = post(
        url, "/ferrule/v1/agent_step", {"name": "step-lm", "messages": question, "tools": tools}
    )
    assert answer.status == 422, answer.body
    error = answer.json()["error"]
    assert error["kind"] == "invalid_input"
    assert error["details"]["errors"][0]["path"] == path
    assert error["message"].startswith(f"{path}: ")
    # the same step with good tools (bare descriptions or in the OpenAI shape) runs
    good = [
        STEP_TOOL,
        {"type": "function", "function": STEP_TOOL},
        {"type": "function", **STEP_TOOL},
    ]
    body = {"name": "step-lm", "messages": question, "tools": good}
    assert post(url, "/ferrule/v1/agent_step", body).status == 200


# -- slow senders --------------------------------------------------------------------------


def test_a_half_sent_body_gets_408_and_its_connection_closes():
    with ServerThread(hardening_kernel(), read_timeout=0.5) as url:
        port = urlsplit(url).port
        with socket.create_connection(("127.0.0.1", port), timeout=0.1) as sock:
            sock.sendall(
                b"POST /ferrule/v1/call HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"oper'
            )
            started = time.monotonic()
            received = b""
            while time.monotonic() - started < 20:
                try:
                    chunk = sock.recv(4096)
                except TimeoutError:
                    chunk = None
                if chunk == b"":  # closed
                    break
                received += chunk or b""
                try:
                    sock.sendall(b" ")  # trickling on, as a slowloris client does
                except OSError:
                    break
            took = time.monotonic() - started
        assert received.startswith(b"HTTP/1.1 408")
        assert b'"kind":"request_timeout"' in received
        assert took < 0.5 + 2 + 4  # the timeout, then at most the drain of the rest


def test_a_half_sent_request_head_closes_its_connection():
    with ServerThread(hardening_kernel(), read_timeout=0.5) as url:
        port = urlsplit(url).port
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /ferrule/v1/call HTTP/1.1\r\nHost: 127.0")
            started = time.monotonic()
            assert sock.recv(100) == b""
            assert time.monotonic() - started < 6


# -- what error text reaches clients -------------------------------------------------------------


def test_plugin_exception_text_stays_in_the_servers_log_unless_errors_are_exposed(caplog):
    caplog.set_level(logging.WARNING, logger="ferrule.server")
    with ServerThread(hardening_kernel(), expose_errors=False) as url:
        answer = post(url, "/ferrule/v1/call", {"operator": "fail", "inputs": {"text": "x"}})
        error = answer.json()["error"]
        assert answer.status == 500 and error["kind"] == "plugin_error"
        assert "/srv/internal" not in answer.body.decode()
        plugin = error["details"]["plugin"]
        assert error["message"] == (
            f"operator 'fail' failed in plugin {plugin!r}: RuntimeError "
            "(its message is in the server's log)"
        )
        assert "/srv/internal" in caplog.text
        with Runtime(url=url) as rt, pytest.raises(FerruleError) as info:
            rt.call("fail", {"text": "x"})
        assert "/srv/internal" not in info.value.message
        assert info.value.details["exception_type"] == "RuntimeError"


def test_on_loopback_errors_are_exposed_and_the_token_is_scrubbed():
    with ServerThread(hardening_kernel(), token=TOKEN) as url:
        answer = post(
            url,
            "/ferrule/v1/call",
            {"operator": "fail", "inputs": {"text": f"token {TOKEN}"}},
            Authorization=f"Bearer {TOKEN}",
        )
        message = answer.json()["error"]["message"]
        assert "/srv/internal/db.sqlite" in message and TOKEN not in message


# -- tokens beyond loopback -----------------------------------------------------------------


@pytest.mark.parametrize("token", ["hunter2", "a" * 40, "abcabcabcabcabcabcabcabcabc", STRONG[:20]])
def test_a_weak_token_is_refused_beyond_loopback(token):
    with pytest.raises(FerruleError, match="weak token"):
        check_bind("0.0.0.0", token)
    check_bind("127.0.0.1", token)  # on loopback any token is an extra
    check_bind("0.0.0.0", STRONG)


def start_serve(*args: str, env: dict[str, str] | None = None, path: Path | None = None):
    environment = {k: v for k, v in os.environ.items() if k != "FERRULE_TOKEN"}
    if path is not None:
        environment["PYTHONPATH"] = os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")])
    environment.update(env or {})
    command = [sys.executable, "-m", "ferrule.cli", "serve", "--port", "0", *args]
    return subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_the_command_refuses_a_weak_token_beyond_loopback():
    process = start_serve("--host", "0.0.0.0", env={"FERRULE_TOKEN": "hunter2"})
    assert process.wait(timeout=30) == 2
    assert "weak token" in process.stderr.read()


def test_the_command_generates_and_prints_a_token():
    process = start_serve("--generate-token")
    try:
        token = process.stderr.readline().rstrip().rsplit(" ", 1)[1]
        line = process.stdout.readline()
        assert line.rstrip().endswith("with a bearer token")
        url = line.split("listening on ")[1].split()[0]
        assert len(token) >= 40
        assert (
            post(url, "/ferrule/v1/call", {"operator": "echo", "inputs": {"text": "x"}}).status
            == 401
        )
        with Runtime(url=url, token=token) as rt:
            assert rt.call("echo", {"text": "x"}) == {"text": "x"}
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0


# -- logs -----------------------------------------------------------------------------------


def disconnect_mid_stream(url: str, path: str, payload: dict[str, Any], **headers: str) -> None:
    """Start a stream, read a little, and reset the connection (closing with unread data)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request("POST", path, json.dumps(payload).encode(), {**JSON, **headers})
    response = connection.getresponse()
    assert response.status == 200 and response.read1(100)
    connection.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


ENDLESS = {**CHAT, "model": "endless", "stream": True}


async def test_a_client_that_disconnects_is_logged_at_debug_not_error(caplog):
    caplog.set_level(logging.DEBUG, logger="ferrule")
    # A host app's runner as aiohttp makes it by default (no handler_cancellation): the
    # stream learns that its client left when its next write fails.
    runner = web.AppRunner(create_app(hardening_kernel()))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        for _ in range(3):
            EndlessModel.closed.clear()
            await asyncio.to_thread(disconnect_mid_stream, url, "/v1/chat/completions", ENDLESS)
            assert await asyncio.to_thread(EndlessModel.closed.wait, 5)
    finally:
        await runner.cleanup()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert any(r.getMessage().startswith("client_disconnected") for r in caplog.records)


def test_the_access_log_has_one_line_per_request_and_no_secret(caplog):
    caplog.set_level(logging.INFO, logger="ferrule.server.access")
    with ServerThread(hardening_kernel(), token=TOKEN) as url:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        body = {"operator": "say", "inputs": {"text": "body-secret"}}
        post(url, "/ferrule/v1/call?api_key=query-secret", body, **auth)
        send(url, "GET", "/nowhere", None, auth)
        post(url, "/ferrule/v1/iter", {"operator": "spell", "inputs": {"text": "ab"}}, **auth)
        send(url, "GET", "/v1/models", None, {"Authorization": "Bearer wrong-token"})
        EndlessModel.closed.clear()
        disconnect_mid_stream(url, "/v1/chat/completions", ENDLESS, **auth)
        assert EndlessModel.closed.wait(5)
        time.sleep(0.1)
    records = [r for r in caplog.records if r.name == "ferrule.server.access"]
    assert [
        (r.ferrule_fields["method"], r.ferrule_fields["path"], r.ferrule_fields["status"])
        for r in records
    ] == [
        ("POST", "/ferrule/v1/call", 200),
        ("GET", "/nowhere", 404),
        ("POST", "/ferrule/v1/iter", 200),
        ("GET", "/v1/models", 401),
        ("POST", "/v1/chat/completions", 499),  # the client left before the end
    ]
    assert all(r.levelno == logging.INFO for r in records)
    for secret in (TOKEN, "wrong-token", "body-secret", "query-secret"):
        assert secret not in caplog.text


# -- SIGTERM ---------------------------------------------------------------------------------

STUCK_PLUGIN = '''
"""Plugin calls that never return, for `ferrule serve --plugin stuck_fixture:plugin`."""
import pathlib, threading, time
import attrs
from ferrule_kernel import OperatorSpec, hookimpl


@attrs.frozen
class Marker:
    path: str


def stuck_in_a_thread(inputs: Marker) -> dict:
    pathlib.Path(inputs.path).write_text("stuck")
    threading.Event().wait()
    return {}


async def stuck_on_the_loop(inputs: Marker) -> dict:
    pathlib.Path(inputs.path).write_text("stuck")
    while True:
        time.sleep(1)  # blocks the event loop itself


class Plugin:
    @hookimpl
    def ferrule_register_operators(self):
        return [
            OperatorSpec("stuck_in_a_thread", stuck_in_a_thread, Marker),
            OperatorSpec("stuck_on_the_loop", stuck_on_the_loop, Marker),
        ]


plugin = Plugin()
'''


@pytest.mark.parametrize(
    ("operator", "code", "bound"),
    # grace 1 s: a request stuck in a worker thread is cancelled after it and the process
    # leaves the thread behind; a loop blocked for good is left by the watchdog (2 * 1 + 5 s).
    [("stuck_in_a_thread", 0, 10.0), ("stuck_on_the_loop", 1, 15.0)],
)
def test_sigterm_stops_the_server_while_a_plugin_call_is_stuck(tmp_path, operator, code, bound):
    (tmp_path / "stuck_fixture.py").write_text(textwrap.dedent(STUCK_PLUGIN))
    process = start_serve(
        "--plugin", "stuck_fixture:plugin", "--shutdown-grace", "1", path=tmp_path
    )
    try:
        url = process.stdout.readline().split("listening on ")[1].split()[0]
        marker = tmp_path / "marker"
        failures: list[BaseException] = []

        def call() -> None:
            try:
                with Runtime(url=url) as rt:
                    rt.call(operator, {"path": str(marker)})
            except BaseException as exc:
                failures.append(exc)

        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists()
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == code
        assert time.monotonic() - started < bound
        caller.join(10)
        assert failures and isinstance(failures[0], RemoteError)
    finally:
        process.kill()
        process.wait(timeout=20)


def test_stop_on_stdin_eof_stops_the_server_when_its_parent_goes():
    """``--stop-on-stdin-eof``: the parent's end of the stdin pipe closing (as the OS does
    when a parent is killed) stops the server as SIGTERM does; input before it is dropped."""
    environment = {k: v for k, v in os.environ.items() if k != "FERRULE_TOKEN"}
    command = [sys.executable, "-m", "ferrule.cli", "serve", "--port", "0", "--stop-on-stdin-eof"]
    process = subprocess.Popen(
        command,
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = process.stdout.readline().split("listening on ")[1].split()[0]
        assert process.stdin is not None
        process.stdin.write("anything the parent writes\n")
        process.stdin.flush()
        with Runtime(url=url) as rt:  # still serving
            assert rt.call("echo", {"text": "x"}) == {"text": "x"}
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()


def test_without_the_flag_stdin_ending_does_not_stop_the_server():
    environment = {k: v for k, v in os.environ.items() if k != "FERRULE_TOKEN"}
    command = [sys.executable, "-m", "ferrule.cli", "serve", "--port", "0"]
    process = subprocess.Popen(
        command, env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdin is not None
        process.stdin.close()  # stdin ends at once: a server without the flag never reads it
        url = process.stdout.readline().split("listening on ")[1].split()[0]
        with Runtime(url=url) as rt:
            assert rt.call("echo", {"text": "x"}) == {"text": "x"}
        assert process.poll() is None
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


# -- error kinds map to a status by family (issue 31, item 7) ------------------------------


def _error_classes() -> list[type[FerruleError]]:
    """Every error class the kernel, the kit, the app and the installed plugins define:
    their modules imported, then `FerruleError`'s subclasses walked."""
    import importlib
    import pkgutil

    import ferrule
    import ferrule_kernel
    import ferrule_kit

    for package in (ferrule_kernel, ferrule_kit, ferrule):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if any(part in info.name for part in (".testing", "webchat", ".cli", "__main__")):
                continue  # test kits and front ends: no error kinds, heavy imports
            importlib.import_module(info.name)
    for plugin in Kernel().plugins():  # each plugin's errors module, where it has one
        module = plugin["module"].partition(":")[0].rpartition(".")[0] or plugin["module"]
        try:
            importlib.import_module(f"{module}.errors")
        except ImportError:
            pass
    found: list[type[FerruleError]] = []
    todo: list[type[FerruleError]] = [FerruleError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return found


def test_every_invalid_input_kind_is_a_4xx_on_every_route_family():
    from ferrule.server.statuses import STATUSES, status_of
    from ferrule_kernel import InvalidInputError

    classes = _error_classes()
    kinds = {cls.kind for cls in classes}
    assert {"dimension_mismatch", "host_policy", "unsupported_content"} <= kinds  # walked
    assert set(STATUSES) <= kinds, set(STATUSES) - kinds  # no row for a kind nobody has
    wrong = {
        cls.__qualname__: (status_of(cls).ferrule, status_of(cls).openai)
        for cls in classes
        if issubclass(cls, InvalidInputError)
        and not (400 <= status_of(cls).ferrule < 500 and 400 <= status_of(cls).openai < 500)
    }
    assert wrong == {}
    # a kind with no row of its own takes its nearest family's
    for cls in classes:
        family = next(
            c for c in cls.__mro__ if getattr(c, "kind", None) in STATUSES or c is FerruleError
        )
        if family is not FerruleError:
            assert status_of(cls) == STATUSES[family.kind], cls


@pytest.fixture(scope="module")
def vector_server() -> Iterator[str]:
    with ServerThread(Kernel(), token=TOKEN) as url:
        yield url


@pytest.mark.parametrize(
    ("component_type", "method", "inputs"),
    [
        ("faiss_store", "ensure_collection", {"dimension": 4}),
        ("faiss_vector_store", "insert", {"embedding": [1.0, 0.0, 0.0, 0.0], "document": "four"}),
        ("faiss_vector_store", "retrieve", {"query_embedding": [1.0, 0.0], "top_k": 1}),
        ("faiss_store", "upsert", {"chunks": [{"id": "x", "vector": [1.0, 0.0, 0.0, 0.0]}]}),
    ],
)
def test_a_vector_dimension_mismatch_is_a_422_not_a_500(
    vector_server, component_type, method, inputs
):
    """faiss raises dimension_mismatch, a subclass of invalid input (issue 31, repr. 7): on
    ferrule's store (faiss_store) and on Ailoy 0.1's raw one over it (faiss_vector_store)."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    name = f"vectors-{method}"
    define = {"component_type": component_type, "name": name, "attrs": {"dimension": 3}}
    assert post(vector_server, "/ferrule/v1/define", define, **auth).status == 200
    three = {"chunks": [{"id": "three", "vector": [1.0, 0.0, 0.0]}]}
    if component_type == "faiss_vector_store":
        three = {"embedding": [1.0, 0.0, 0.0], "document": "three"}
    stored = post(
        vector_server,
        "/ferrule/v1/call_method",
        {
            "name": name,
            "method": "upsert" if component_type == "faiss_store" else "insert",
            "inputs": three,
        },
        **auth,
    )
    assert stored.status == 200, stored.body
    answer = post(
        vector_server,
        "/ferrule/v1/call_method",
        {"name": name, "method": method, "inputs": inputs},
        **auth,
    )
    assert answer.status == 422, answer.body
    assert answer.json()["error"]["kind"] == "dimension_mismatch"
