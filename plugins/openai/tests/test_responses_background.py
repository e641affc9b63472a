"""Background mode of ferrule-openai's Responses component against a loopback server
speaking the documented wire: ``POST /responses`` with ``background: true`` answers a
``queued`` response, ``GET /responses/{id}`` its state until it ends, ``POST
/responses/{id}/cancel`` stops it. Nothing reaches the internet."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio
from ferrule import AsyncRuntime
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import (
    ModelError,
    ProviderProtocolError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    StreamInterruptedError,
)
from ferrule_kit.testing.loopback import Reply, server_fixture
from ferrule_kit.testing.providers import USER, Definer, collect
from ferrule_openai.testing import background_response

KEY = "sk-proj-LOOPBACK-background-secret-0123456789"
INPUTS = {"messages": [USER]}

server = server_fixture()


@pytest_asyncio.fixture
async def runtime(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    async with AsyncRuntime() as rt:
        yield rt


@pytest_asyncio.fixture
async def define(runtime):
    """A background Responses component polling every 10 ms."""
    defaults = {
        "model": "gpt-4.1",
        "max_retries": 0,
        "background": True,
        "background_poll_interval": 0.01,
    }
    return Definer(runtime, "openai_responses_language_model", "bg", defaults)


def texts(items):
    return "".join(
        part["text"]
        for i in items
        if not i.get("finish_reason")
        for part in i["message"]["content"]
    )


def calls(server):
    return [(r.method, r.path) for r in server.requests]


async def test_queued_in_progress_completed(define, runtime, server):
    name = await define()
    server.script(
        background_response("queued", response_id="resp_bg"),
        background_response("in_progress", response_id="resp_bg"),
        background_response("completed", ["Otters ", "in space."], response_id="resp_bg"),
    )
    items = await collect(runtime, name, {**INPUTS, "temperature": 0.3})
    assert texts(items) == "Otters in space."
    assert items[-1]["finish_reason"] == "stop"
    assert items[-1]["usage"]["input_tokens"] == 11
    assert calls(server) == [
        ("POST", "/v1/responses"),
        ("GET", "/v1/responses/resp_bg"),
        ("GET", "/v1/responses/resp_bg"),
    ]
    create = server.requests[0].json
    # background responses are stored while they run, and answered whole, not streamed
    assert create["background"] is True and create["store"] is True
    assert create["stream"] is False
    assert create["temperature"] == 0.3
    assert create["input"][0]["content"] == [{"type": "input_text", "text": "Hi"}]
    assert server.requests[1].headers["authorization"] == f"Bearer {KEY}"
    assert server.requests[1].body == b""


async def test_completed_at_once_is_not_polled(define, runtime, server):
    name = await define()
    server.script(background_response("completed", "Done."))
    assert texts(await collect(runtime, name, INPUTS)) == "Done."
    assert calls(server) == [("POST", "/v1/responses")]


async def test_incomplete_ends_as_a_streamed_incomplete_does(define, runtime, server):
    name = await define()
    server.script(
        background_response("queued"),
        background_response("incomplete", "Cut", incomplete_reason="max_output_tokens"),
    )
    items = await collect(runtime, name, INPUTS)
    assert texts(items) == "Cut"
    assert items[-1]["finish_reason"] == "length"


async def test_failed_is_the_typed_error_of_its_code(define, runtime, server):
    name = await define()
    error = {"code": "server_error", "message": "The model crashed while thinking."}
    server.script(background_response("queued"), background_response("failed", error=error))
    with pytest.raises(ProviderUnavailableError, match="The model crashed while thinking"):
        await collect(runtime, name, INPUTS)
    assert calls(server)[-1] == ("GET", "/v1/responses/resp_1")  # nothing to cancel


async def test_cancelled_at_the_provider(define, runtime, server):
    name = await define()
    server.script(background_response("in_progress"), background_response("cancelled"))
    with pytest.raises(ModelError, match="resp_1 was cancelled at the provider"):
        await collect(runtime, name, INPUTS)


async def test_max_wait_cancels_it_and_times_out(define, runtime, server):
    name = await define(background_max_wait=0.05)
    server.script(background_response("queued"))
    server.script(*[lambda _r: background_response("in_progress")] * 200)
    with pytest.raises(ProviderTimeoutError, match=r"background_max_wait=0\.05s") as info:
        await collect(runtime, name, INPUTS)
    assert info.value.details["response_id"] == "resp_1"
    assert calls(server)[-1] == ("POST", "/v1/responses/resp_1/cancel")
    assert server.requests[-1].json == {}
    # polled until the deadline, never past it: the last poll is at most one interval late
    polls = [c for c in calls(server) if c[0] == "GET"]
    assert 1 <= len(polls) <= 6


async def test_a_cancelled_request_cancels_the_response(define, runtime, server):
    name = await define()
    server.script(background_response("queued"))
    server.script(*[lambda _r: background_response("in_progress")] * 2000)
    task = asyncio.create_task(collect(runtime, name, INPUTS))
    while len(server.requests) < 3:  # created and polled twice
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(500):
        if ("POST", "/v1/responses/resp_1/cancel") in calls(server):
            break
        await asyncio.sleep(0.01)
    assert ("POST", "/v1/responses/resp_1/cancel") in calls(server)


async def test_a_failed_poll_cancels_the_response(define, runtime, server):
    name = await define()
    overloaded = {"error": {"message": "Overloaded", "type": "server_error"}}
    server.script(
        background_response("queued"),
        Reply.json(overloaded, status=503),
        background_response("cancelled"),
    )
    with pytest.raises(ProviderUnavailableError, match="Overloaded"):
        await collect(runtime, name, INPUTS)
    assert calls(server)[-1] == ("POST", "/v1/responses/resp_1/cancel")


async def test_a_reply_that_is_not_a_response(define, runtime, server):
    name = await define()
    server.script(Reply.json({"status": "queued"}))
    with pytest.raises(ProviderProtocolError, match="no id or status"):
        await collect(runtime, name, INPUTS)


async def test_an_unknown_status(define, runtime, server):
    name = await define()
    server.script(background_response("paused"))
    with pytest.raises(ProviderProtocolError, match="unknown status 'paused'"):
        await collect(runtime, name, INPUTS)


@pytest.mark.parametrize(
    ("attributes", "field"),
    [
        ({"background_poll_interval": -1.0}, "background_poll_interval"),
        ({"background_poll_interval": 0}, "background_poll_interval"),
        ({"background_max_wait": -5}, "background_max_wait"),
    ],
)
async def test_bad_values_name_the_field(define, attributes, field):
    with pytest.raises(InvalidInputError) as info:
        await define(**attributes)
    assert field in str(info.value.details)


async def test_without_background_it_streams(runtime, server):
    from ferrule_openai.testing import responses_reply

    await runtime.define(
        "openai_responses_language_model", "plain", {"model": "gpt-4.1", "max_retries": 0}
    )
    server.script(responses_reply("streamed"))
    assert texts(await collect(runtime, "plain", INPUTS)) == "streamed"
    body = server.requests[0].json
    assert body["stream"] is True and "background" not in body


async def test_a_reply_that_is_not_json(define, runtime, server):
    name = await define()
    # a server that ignores ``background`` and streams its answer
    server.script(Reply.sse([b"event: response.created\ndata: {}\n\n"]))
    with pytest.raises(StreamInterruptedError, match="not valid JSON") as info:
        await collect(runtime, name, INPUTS)
    assert info.value.details["status"] == 200
