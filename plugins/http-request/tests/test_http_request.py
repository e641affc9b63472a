"""http_request against a real aiohttp server on 127.0.0.1 (a random port, in a thread)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from aiohttp import web
from ferrule import AsyncRuntime, Runtime
from ferrule_http_request.errors import HTTPRequestError, HTTPRequestTimeoutError
from ferrule_kernel import FerruleError, InvalidInputError, error_from_dict


async def hello(request: web.Request) -> web.Response:
    response = web.Response(text="hello ☃", headers={"X-Test": "yes"})
    response.headers.add("X-Multi", "a")
    response.headers.add("X-Multi", "b")
    return response


async def echo(request: web.Request) -> web.Response:
    return web.json_response(
        {
            "method": request.method,
            "body": await request.text(),
            "content_type": request.headers.get("Content-Type"),
            "custom": request.headers.get("X-Custom"),
            "query": dict(request.query),
        },
        status=201,
    )


async def latin1(request: web.Request) -> web.Response:
    return web.Response(body="café".encode("latin-1"), content_type="text/plain", charset="latin-1")


async def slow(request: web.Request) -> web.Response:
    await asyncio.sleep(30)
    return web.Response(text="too late")


async def redirect(request: web.Request) -> web.Response:
    raise web.HTTPFound("/hello")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The base URL of a loopback server running on its own loop in a thread."""
    app = web.Application()
    app.router.add_get("/hello", hello)
    app.router.add_route("*", "/echo", echo)
    app.router.add_get("/latin1", latin1)
    app.router.add_get("/slow", slow)
    app.router.add_get("/redirect", redirect)
    loop = asyncio.new_event_loop()
    # handler_cancellation: the slow handler stops when the timed-out client hangs up.
    runner = web.AppRunner(app, shutdown_timeout=0.1, handler_cancellation=True)
    started = threading.Event()
    port: list[int] = []

    async def start() -> None:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port.append(runner.addresses[0][1])

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(10)
    yield f"http://127.0.0.1:{port[0]}"
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


@pytest.fixture(scope="module")
def rt() -> Iterator[Runtime]:
    with Runtime() as runtime:
        yield runtime


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_get(rt: Runtime, server: str) -> None:
    result = rt.call("http_request", {"url": f"{server}/hello"})
    assert result["status"] == 200
    assert result["body"] == "hello ☃"
    assert result["headers"]["X-Test"] == "yes"
    assert result["headers"]["X-Multi"] == "a, b"
    assert result["headers"]["Content-Type"] == "text/plain; charset=utf-8"


async def test_post_with_body_and_headers(server: str) -> None:
    async with AsyncRuntime() as art:
        result = await art.call(
            "http_request",
            {
                "url": f"{server}/echo?page=2",
                "method": "post",
                "headers": {"Content-Type": "application/json", "X-Custom": "ü-value"},
                "body": '{"question": "größer?"}',
                "timeout": 5,
            },
        )
    assert result["status"] == 201
    assert result["headers"]["Content-Type"].startswith("application/json")
    assert json.loads(result["body"]) == {
        "method": "POST",
        "body": '{"question": "größer?"}',
        "content_type": "application/json",
        "custom": "ü-value",
        "query": {"page": "2"},
    }


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "OPTIONS"])
def test_other_methods(rt: Runtime, server: str, method: str) -> None:
    result = rt.call("http_request", {"url": f"{server}/echo", "method": method, "body": "x"})
    assert json.loads(result["body"])["method"] == method


def test_body_defaults_to_utf8_text(rt: Runtime, server: str) -> None:
    result = rt.call("http_request", {"url": f"{server}/echo", "method": "POST", "body": "naïve"})
    echoed = json.loads(result["body"])
    assert echoed["body"] == "naïve"
    assert echoed["content_type"] == "text/plain; charset=utf-8"


def test_head_has_no_body(rt: Runtime, server: str) -> None:
    result = rt.call("http_request", {"url": f"{server}/hello", "method": "HEAD"})
    assert (result["status"], result["body"]) == (200, "")


def test_not_found_is_a_response(rt: Runtime, server: str) -> None:
    result = rt.call("http_request", {"url": f"{server}/missing"})
    assert result["status"] == 404
    assert "Not Found" in result["body"]


def test_declared_charset_decodes_the_body(rt: Runtime, server: str) -> None:
    assert rt.call("http_request", {"url": f"{server}/latin1"})["body"] == "café"


def test_redirect_is_followed(rt: Runtime, server: str) -> None:
    result = rt.call("http_request", {"url": f"{server}/redirect"})
    assert (result["status"], result["body"]) == (200, "hello ☃")


def test_timeout(rt: Runtime, server: str) -> None:
    start = time.monotonic()
    with pytest.raises(HTTPRequestTimeoutError) as caught:
        rt.call("http_request", {"url": f"{server}/slow", "timeout": 0.3})
    assert time.monotonic() - start < 5
    assert caught.value.message == f"GET {server}/slow timed out after 0.3 s"
    assert caught.value.kind == "http_request_timeout"
    # the runtime keeps serving
    assert rt.call("http_request", {"url": f"{server}/hello"})["status"] == 200


def test_connection_refused(rt: Runtime) -> None:
    port = closed_port()
    with pytest.raises(HTTPRequestError) as caught:
        rt.call("http_request", {"url": f"http://127.0.0.1:{port}/x"})
    error = caught.value
    assert type(error) is HTTPRequestError
    assert (
        error.message
        == f"GET http://127.0.0.1:{port}/x failed: cannot connect to 127.0.0.1:{port}: connection refused"
    )
    assert error.details["reason"] == "connection_refused"
    # the error crosses the wire as itself
    rebuilt = error_from_dict(json.loads(json.dumps(error.to_dict())))
    assert type(rebuilt) is HTTPRequestError and rebuilt.message == error.message


def test_secrets_stay_out_of_errors(rt: Runtime) -> None:
    port = closed_port()
    url = f"http://user:pw-s3cret@127.0.0.1:{port}/path?token=t0ken-s3cret"
    with pytest.raises(HTTPRequestError) as caught:
        rt.call("http_request", {"url": url, "headers": {"X-Api-Key": "key-s3cret"}})
    error = caught.value
    shown = [json.dumps(error.to_dict())]
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:  # the whole chain a traceback would show
        seen.add(id(link))
        shown += [repr(link), str(link)]
        link = link.__cause__ or link.__context__
    assert "s3cret" not in " ".join(shown)
    assert f"http://127.0.0.1:{port}/path" in error.message


@pytest.mark.parametrize(
    ("inputs", "path"),
    [
        ({"url": "ftp://127.0.0.1/file"}, "$.url"),
        ({"url": "file:///etc/passwd"}, "$.url"),
        ({"url": "127.0.0.1:8080/x"}, "$.url"),
        ({"url": "http:///no-host"}, "$.url"),
        ({"url": "http://127.0.0.1:99999/"}, "$.url"),
        ({"url": "http://exa mple.com/"}, "$.url"),
        ({"url": "http://example.com/\r\nX: y"}, "$.url"),
        ({"url": 5}, "$.url"),
        ({}, "$.url"),
        ({"url": "http://127.0.0.1/", "method": "BREW"}, "$.method"),
        ({"url": "http://127.0.0.1/", "headers": {"X-A": "a\r\nInjected: 1"}}, "$.headers['X-A']"),
        ({"url": "http://127.0.0.1/", "headers": {"Bad Name": "a"}}, "$.headers['Bad Name']"),
        ({"url": "http://127.0.0.1/", "headers": ["X-A"]}, "$.headers"),
        ({"url": "http://127.0.0.1/", "body": {"a": 1}}, "$.body"),
        (
            {"url": "http://u:p@127.0.0.1/", "headers": {"authorization": "Basic x"}},
            "$.headers['authorization']",
        ),
        ({"url": "http://127.0.0.1/", "timeout": 0}, "$.timeout"),
        ({"url": "http://127.0.0.1/", "timeout": -1}, "$.timeout"),
        ({"url": "http://127.0.0.1/", "timeout": "5"}, "$.timeout"),
    ],
)
def test_bad_input_names_the_field(rt: Runtime, inputs: dict, path: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        rt.call("http_request", inputs)
    assert [e["path"] for e in caught.value.errors] == [path]


def test_errors_are_ferrule_errors() -> None:
    assert issubclass(HTTPRequestTimeoutError, HTTPRequestError)
    assert issubclass(HTTPRequestError, FerruleError)


def test_discovery_does_not_import_aiohttp() -> None:
    code = (
        "import sys, ferrule_http_request.plugin as p; "
        "p.ferrule_register_operators(); "
        "assert 'aiohttp' not in sys.modules, 'aiohttp imported at discovery'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
