"""http_request against a real aiohttp server on 127.0.0.1 (a random port, in a thread).

Loopback is refused by default (see `ferrule_http_request.policy`): these tests allow it
through ``FERRULE_HTTP_REQUEST_ALLOW``, except those that check the refusals, which also
prove that nothing was connected to: every address aiohttp tries is recorded.
"""

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
from ferrule_http_request.client import MAX_BYTES_VARIABLE
from ferrule_http_request.errors import HTTPRequestError, HTTPRequestTimeoutError
from ferrule_http_request.policy import ALLOW_VARIABLE
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


async def redirect_to(request: web.Request) -> web.Response:
    raise web.HTTPFound(request.query["to"])


async def big(request: web.Request) -> web.Response:
    return web.Response(body=b"x" * int(request.query["n"]))


HITS: list[str] = []


@web.middleware
async def count_hits(request: web.Request, handler):  # type: ignore[no-untyped-def]
    HITS.append(request.path)
    return await handler(request)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The base URL of a loopback server running on its own loop in a thread."""
    app = web.Application(middlewares=[count_hits])
    app.router.add_get("/hello", hello)
    app.router.add_get("/redirect_to", redirect_to)
    app.router.add_get("/big", big)
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


@pytest.fixture(autouse=True)
def allow_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_VARIABLE, "127.0.0.1")
    monkeypatch.delenv(MAX_BYTES_VARIABLE, raising=False)


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """Every address aiohttp opens a connection to, in this test."""
    import aiohappyeyeballs

    opened: list[tuple] = []
    start = aiohappyeyeballs.start_connection

    async def recording(addr_infos, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.extend(info[4] for info in addr_infos)
        return await start(addr_infos, *args, **kwargs)

    monkeypatch.setattr(aiohappyeyeballs, "start_connection", recording)
    return opened


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


def test_ailoy_s_status_code_and_header_names_as_sent(rt: Runtime, server: str) -> None:
    # Ailoy 0.1's http_request answers status_code, and headers under the server's names
    ok = rt.call("http_request", {"url": f"{server}/hello", "method": "GET", "headers": {}})
    missing = rt.call("http_request", {"url": f"{server}/missing"})
    assert (ok["status_code"], missing["status_code"]) == (ok["status"], missing["status"])
    assert (ok["status_code"], missing["status_code"]) == (200, 404)
    assert ok["headers"]["Content-Type"].startswith("text/plain")
    assert "content-type" not in ok["headers"]


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
        ({"url": "http://127.0.0.1/", "timeout": 301}, "$.timeout"),
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


# -- where it may connect --------------------------------------------------------------


def port_of(server: str) -> int:
    return int(server.rsplit(":", 1)[1])


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("127.0.0.1", "127.0.0.1 is a loopback address"),
        ("localhost", "localhost resolves to a loopback address"),
        ("[::1]", "::1 is a loopback address"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1 is an IPv6 address for 127.0.0.1, a loopback"),
        ("2130706433", "127.0.0.1 is a loopback address"),  # decimal
        ("0x7f000001", "127.0.0.1 is a loopback address"),  # hexadecimal
        ("0177.0.0.1", "127.0.0.1 is a loopback address"),  # octal
        ("127.1", "127.0.0.1 is a loopback address"),
        ("169.254.169.254", "169.254.169.254 is a link-local address (where cloud metadata"),
        ("10.0.0.1", "10.0.0.1 is a private address"),
        ("192.168.1.1", "192.168.1.1 is a private address"),
        ("100.100.100.200", "100.100.100.200 is not a public address"),  # a metadata service
        ("[fd00:ec2::254]", "fd00:ec2::254 is a private address"),  # AWS metadata, IPv6
        ("[64:ff9b::a00:1]", "64:ff9b::a00:1 is an IPv6 address for 10.0.0.1, a private"),
        ("0.0.0.0", "0.0.0.0 is the unspecified address"),
        ("224.0.0.1", "224.0.0.1 is a multicast address"),
    ],
)
def test_addresses_that_are_not_public_are_refused_before_connecting(
    rt: Runtime, server: str, connections: list, monkeypatch, host: str, why: str
) -> None:
    monkeypatch.delenv(ALLOW_VARIABLE)
    HITS.clear()
    url = f"http://{host}:{port_of(server)}/hello"
    with pytest.raises(HTTPRequestError) as caught:
        rt.call("http_request", {"url": url})
    assert caught.value.details["reason"] == "address_refused"
    assert f"refused: {why}" in caught.value.message
    assert connections == [] and HITS == []


def test_a_redirect_to_a_refused_address_is_not_followed(
    rt: Runtime, server: str, connections: list, monkeypatch
) -> None:
    monkeypatch.setenv(ALLOW_VARIABLE, "localhost")  # the first hop only: by name
    HITS.clear()
    port = port_of(server)
    url = f"http://localhost:{port}/redirect_to?to=http://127.0.0.1:{port}/hello"
    with pytest.raises(HTTPRequestError, match=r"refused: 127\.0\.0\.1 is a loopback address"):
        rt.call("http_request", {"url": url})
    assert HITS == ["/redirect_to"]
    assert all(address[0] in ("127.0.0.1", "::1") for address in connections)
    assert len(connections) >= 1  # the allowed first hop did connect


def test_the_allowlist_takes_networks_and_names(rt: Runtime, server: str, monkeypatch) -> None:
    for allowed in ("127.0.0.0/8", "::1, 127.0.0.1", "LOCALHOST."):
        monkeypatch.setenv(ALLOW_VARIABLE, allowed)
        host = "localhost" if "LOCALHOST" in allowed else "127.0.0.1"
        url = f"http://{host}:{port_of(server)}/hello"
        assert rt.call("http_request", {"url": url})["status"] == 200
    monkeypatch.setenv(ALLOW_VARIABLE, "not a/host!")
    with pytest.raises(HTTPRequestError, match=f"{ALLOW_VARIABLE} holds 'a/host!'"):
        rt.call("http_request", {"url": f"{server}/hello"})


def test_a_name_resolving_to_any_refused_address_is_refused(
    rt: Runtime, connections: list, monkeypatch
) -> None:
    # DNS rebinding: one public and one private answer. Every answer is checked, and the
    # connection goes only to checked answers (the name is not resolved again).
    import aiohttp

    async def rebinding(self, host, port=0, family=socket.AF_INET):  # type: ignore[no-untyped-def]
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": family,
                "proto": 0,
                "flags": 0,
            }
            for address in ("93.184.215.14", "127.0.0.1")
        ]

    monkeypatch.delenv(ALLOW_VARIABLE)
    monkeypatch.setattr(aiohttp.ThreadedResolver, "resolve", rebinding)
    with pytest.raises(HTTPRequestError, match=r"rebind\.example resolves to a loopback address"):
        rt.call("http_request", {"url": "http://rebind.example/"})
    assert connections == []


def test_the_response_body_is_bounded(rt: Runtime, server: str, monkeypatch) -> None:
    monkeypatch.setenv(MAX_BYTES_VARIABLE, "1000")
    assert len(rt.call("http_request", {"url": f"{server}/big?n=1000"})["body"]) == 1000
    with pytest.raises(HTTPRequestError) as caught:
        rt.call("http_request", {"url": f"{server}/big?n=100000"})
    assert caught.value.details["reason"] == "too_large"
    assert "larger than the limit of 1000 bytes" in caught.value.message
