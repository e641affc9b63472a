"""web_fetch against a loopback server (kit's LoopbackServer, a real aiohttp server on
127.0.0.1) serving a page written for the test (pages/article.html): the request it sends,
the Markdown and text it reads back, the limits, the proxy, and the address policy."""

from __future__ import annotations

from pathlib import Path

import pytest
from ferrule import AsyncRuntime
from ferrule_http_request.errors import HTTPRequestError
from ferrule_http_request.plugin import PROXY_VARIABLE
from ferrule_http_request.policy import ALLOW_VARIABLE
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.testing.loopback import Reply, server_fixture

pytestmark = pytest.mark.asyncio
ARTICLE = (Path(__file__).parent / "pages" / "article.html").read_bytes()


def html_page(body: bytes = ARTICLE) -> Reply:
    return Reply(200, {}, [body], "text/html")


server = server_fixture()


@pytest.fixture
async def rt(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ALLOW_VARIABLE, "127.0.0.1")
    async with AsyncRuntime() as runtime:
        yield runtime


async def test_a_page_is_read_as_markdown_without_scripts_or_navigation(rt, server) -> None:
    server.script(html_page())
    out = await rt.call("web_fetch", {"url": f"{server.url}/coffee?ref=1"})
    assert out["content_type"] == "text/html"
    assert out["truncated"] is False
    content = out["content"]
    assert content.startswith("Brewing notes\n\n# Pour-over coffee")  # the title first
    assert "Use **15 g** of coffee for *250 g* of water & wait." in content
    assert "## Steps" in content
    assert "1. Rinse the filter.\n2. Bloom for 30 seconds." in content
    assert "[the guide](https://example.org/coffee)" in content
    for left_out in ("tracker", "color: #333", "Site home", "Menu link", "Copyright footer"):
        assert left_out not in content
    (request,) = server.requests
    assert (request.method, request.path, request.query) == ("GET", "/coffee", {"ref": "1"})
    assert "text/html" in request.headers["accept"]


async def test_text_format_and_the_cut(rt, server) -> None:
    server.script(html_page())
    out = await rt.call("web_fetch", {"url": server.url, "format": "text", "max_chars": 36})
    assert out["content"] == "Brewing notes\n\nPour-over coffee\n\nUse"
    assert out["truncated"] is True


async def test_plain_text_and_json_are_returned_as_sent(rt, server) -> None:
    server.script(Reply(200, {}, [b"  plain words \n"], "text/plain"), Reply.json({"a": 1}))
    assert (await rt.call("web_fetch", {"url": server.url}))["content"] == "plain words"
    out = await rt.call("web_fetch", {"url": server.url})
    assert (out["content"], out["content_type"]) == ('{"a": 1}', "application/json")


async def test_an_error_status_or_binary_content_is_a_typed_error(rt, server) -> None:
    server.script(
        Reply(404, {}, [b"gone"], "text/plain"), Reply(200, {}, [b"\x89PNG"], "image/png")
    )
    with pytest.raises(HTTPRequestError) as error:
        await rt.call("web_fetch", {"url": f"{server.url}/missing"})
    assert error.value.details["reason"] == "status"
    assert "404" in error.value.message
    with pytest.raises(HTTPRequestError) as error:
        await rt.call("web_fetch", {"url": server.url})
    assert error.value.details["reason"] == "not_text"


async def test_the_proxy_is_asked_for_the_page(rt, server, monkeypatch) -> None:
    monkeypatch.setenv(PROXY_VARIABLE, f"{server.url}/fetch")
    server.script(html_page())
    out = await rt.call("web_fetch", {"url": "https://example.org/a%20page?q=1&r=2"})
    assert "# Pour-over coffee" in out["content"]
    (request,) = server.requests
    assert (request.path, request.query) == (
        "/fetch",
        {"url": "https://example.org/a%20page?q=1&r=2"},
    )


async def test_loopback_is_refused_unless_allowed(server, monkeypatch) -> None:
    monkeypatch.delenv(ALLOW_VARIABLE, raising=False)
    async with AsyncRuntime() as rt:
        with pytest.raises(HTTPRequestError) as error:
            await rt.call("web_fetch", {"url": server.url})
    assert error.value.details["reason"] == "address_refused"
    assert server.requests == []


async def test_a_network_client_may_not_name_the_proxy(server) -> None:
    from ferrule_http_request import plugin

    kernel = Kernel(plugins=[plugin], load_entry_points=False)
    try:
        with pytest.raises(InvalidInputError) as error:
            await kernel.call(
                "web_fetch", {"url": "https://example.org/", "proxy_url": server.url}, trusted=False
            )
    finally:
        await kernel.aclose()
    assert error.value.errors[0]["path"] == "$.proxy_url"


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"url": "file:///etc/passwd"}, "$.url"),
        ({"url": "https://example.org/", "max_chars": 0}, "$.max_chars"),
        ({"url": "https://example.org/", "format": "pdf"}, "$.format"),
    ],
)
async def test_bad_input_names_the_field(rt, inputs, field) -> None:
    with pytest.raises(InvalidInputError) as error:
        await rt.call("web_fetch", inputs)
    assert field in str(error.value.errors) or field in error.value.message


# -- through the proxy, the page's own address passes the policy (issue 31, reproduction 4) ---

#: Every spelling of an address that is not public the http_request tests cover.
NOT_PUBLIC = [
    "127.0.0.1",
    "localhost",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:10.0.0.1]",
    "2130706433",
    "0x7f000001",
    "0177.0.0.1",
    "127.1",
    "169.254.169.254",
    "10.0.0.1",
    "192.168.1.1",
    "100.100.100.200",
    "[fd00:ec2::254]",
    "[64:ff9b::a00:1]",
    "0.0.0.0",
    "224.0.0.1",
]


@pytest.mark.parametrize("host", NOT_PUBLIC)
async def test_the_proxy_is_never_asked_for_an_address_that_is_not_public(
    server, monkeypatch, host
) -> None:
    # The proxy is allowed by its name (the host's choice); the page's address is not,
    # however it is spelled. (Allowing localhost allows a page there too: that case runs
    # with nothing allowed, the page refused before the proxy would be.)
    monkeypatch.setenv(ALLOW_VARIABLE, "" if host == "localhost" else "localhost")
    monkeypatch.setenv(PROXY_VARIABLE, f"{server.url.replace('127.0.0.1', 'localhost')}/fetch")
    async with AsyncRuntime() as rt:
        with pytest.raises(HTTPRequestError) as error:
            await rt.call("web_fetch", {"url": f"http://{host}/latest/meta-data/"})
    assert error.value.details["reason"] == "address_refused"
    assert "through its proxy too" in error.value.message
    assert server.requests == []


async def test_through_the_proxy_an_allowed_page_address_is_fetched(server, monkeypatch) -> None:
    monkeypatch.setenv(ALLOW_VARIABLE, "127.0.0.1, 10.0.0.0/8")
    monkeypatch.setenv(PROXY_VARIABLE, f"{server.url}/fetch")
    server.script(html_page())
    async with AsyncRuntime() as rt:
        out = await rt.call("web_fetch", {"url": "http://10.1.2.3/wiki"})
    assert "# Pour-over coffee" in out["content"]
    assert [r.query for r in server.requests] == [{"url": "http://10.1.2.3/wiki"}]
