"""ferrule-duckduckgo through a Runtime, against a loopback server replaying replies written
in the shapes of DuckDuckGo's endpoints (tests/replies/, documented in the README):
the requests it sends, what it reads back, and every failure as a typed error."""

from __future__ import annotations

import html
import json
import socket
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from ferrule import AsyncRuntime
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing.loopback import Pause, Reply, server_fixture
from hypothesis import given
from hypothesis import strategies as st

REPLIES = Path(__file__).parent / "replies"


def page(name: str) -> Reply:
    return Reply(200, {}, [(REPLIES / name).read_bytes()], "text/html")


server = server_fixture()


@pytest.fixture
async def runtime(server, monkeypatch):
    monkeypatch.setenv("FERRULE_DUCKDUCKGO_URL", server.url)
    async with AsyncRuntime() as rt:
        yield rt


async def test_web_results_are_read_in_order_without_ads_redirects_or_repeats(runtime, server):
    server.script(page("results.html"))
    out = await runtime.call(
        "duckduckgo_search", {"query": "latest developments in AI", "max_results": 10}
    )
    assert out["results"] == [
        {
            "title": "The state of AI in 2026: a review",
            "href": "https://www.example.org/ai/2026-review",
            "body": "Small open models now match last year's frontier on reasoning benchmarks "
            "& run on laptops.",
        },
        {
            "title": "Agents that use tools — what changed",
            "href": "https://news.example.com/agents?page=2",
            "body": "Tool calling became a standard part of AI APIs.",
        },
        {
            "title": "Long-context models, explained",
            "href": "https://research.example.net/papers/long-context",
            "body": "Why a million-token window is not a memory.",
        },
    ]
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/html/")
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    form = parse_qs(request.body.decode(), keep_blank_values=True)
    assert form == {"q": ["latest developments in AI"], "b": [""], "kl": ["wt-wt"], "kp": ["-1"]}


async def test_max_results_region_safesearch_and_timelimit_reach_the_form(runtime, server):
    server.script(page("results.html"))
    inputs = {"query": "AI", "max_results": 1, "region": "de-de", "safesearch": "off"}
    out = await runtime.call("duckduckgo_search", {**inputs, "timelimit": "w"})
    assert [r["href"] for r in out["results"]] == ["https://www.example.org/ai/2026-review"]
    form = parse_qs(server.requests[0].body.decode(), keep_blank_values=True)
    assert (form["kl"], form["kp"], form["df"]) == (["de-de"], ["-2"], ["w"])


async def test_a_page_with_no_results_is_an_empty_list(runtime, server):
    server.script(page("no_results.html"))
    assert await runtime.call("duckduckgo_search", {"query": "zxqv"}) == {"results": []}


async def test_news_fetches_the_vqd_token_then_news_js(runtime, server):
    server.script(page("news_page.html"), Reply(200, {}, [(REPLIES / "news.json").read_bytes()]))
    out = await runtime.call("duckduckgo_news", {"query": "AI"})
    assert out["results"] == [
        {
            "date": "2026-11-23T08:00:00+00:00",
            "title": "Open AI model released",
            "body": "A lab released an open AI model with weights & code.",
            "url": "https://news.example.com/open-model",
            "image": "https://images.example.com/ai-model.jpg",
            "source": "Example News",
        },
        {
            "date": "2026-11-22T08:00:00+00:00",
            "title": "Regulators and agents",
            "body": "Regulators met to discuss agents.",
            "url": "https://times.example.com/agents",
            "image": None,
            "source": "Example Times",
        },
    ]
    first, second = server.requests
    assert (first.method, first.path, first.query) == ("GET", "/", {"q": "AI"})
    assert (second.method, second.path) == ("GET", "/news.js")
    assert second.query == {
        "l": "wt-wt",
        "o": "json",
        "noamp": "1",
        "q": "AI",
        "vqd": "4-211263345473920486213577183092145183312",
        "p": "-1",
    }


async def test_base_url_given_in_code_wins_over_the_environment(server, monkeypatch):
    monkeypatch.setenv("FERRULE_DUCKDUCKGO_URL", "http://127.0.0.1:9")  # discard: nothing there
    server.script(page("results.html"))
    async with AsyncRuntime() as rt:
        out = await rt.call("duckduckgo_search", {"query": "AI", "base_url": server.url + "/"})
    assert len(out["results"]) == 3


# -- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize("status", [202, 403, 418, 429])
async def test_duckduckgos_refusals_are_rate_limit_errors(runtime, server, status):
    from ferrule_duckduckgo.errors import WebSearchRateLimitError

    server.script(Reply(status, {}, [b"<html>slow down</html>"], "text/html"))
    with pytest.raises(WebSearchRateLimitError) as info:
        await runtime.call("duckduckgo_search", {"query": "AI"})
    assert info.value.details["status"] == status


async def test_an_error_status_is_a_web_search_error_naming_the_endpoint(runtime, server):
    from ferrule_duckduckgo.errors import WebSearchError

    server.script(Reply(500, {}, [b"boom"], "text/plain"))
    with pytest.raises(WebSearchError, match="500") as info:
        await runtime.call("duckduckgo_news", {"query": "AI"})
    assert info.value.kind == "web_search_error"
    assert info.value.details["url"] == server.url + "/"


async def test_a_stalled_server_is_a_timeout(runtime, server):
    from ferrule_duckduckgo.errors import WebSearchTimeoutError

    server.script(Reply(200, {}, [b"<html>", Pause(2.0), b"</html>"], "text/html"))
    with pytest.raises(WebSearchTimeoutError):
        await runtime.call("duckduckgo_search", {"query": "AI", "timeout": 0.2})


async def test_nothing_listening_is_a_web_search_error(monkeypatch):
    from ferrule_duckduckgo.errors import WebSearchError

    with socket.socket() as sock:  # a port that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("FERRULE_DUCKDUCKGO_URL", f"http://127.0.0.1:{port}")
    async with AsyncRuntime() as rt:
        with pytest.raises(WebSearchError, match="could not reach"):
            await rt.call("duckduckgo_search", {"query": "AI"})


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (b"not json", "not in news.js's shape"),
        (json.dumps({"results": [{"title": "no url or date"}]}).encode(), "KeyError"),
        (json.dumps({"results": {}}).encode(), "not a list"),
    ],
)
async def test_a_news_reply_in_another_shape_is_a_typed_error(runtime, server, second, message):
    from ferrule_duckduckgo.errors import WebSearchError

    server.script(page("news_page.html"), Reply(200, {}, [second]))
    with pytest.raises(WebSearchError, match=message):
        await runtime.call("duckduckgo_news", {"query": "AI"})


async def test_a_search_page_without_a_vqd_token_is_a_typed_error(runtime, server):
    from ferrule_duckduckgo.errors import WebSearchError

    server.script(page("no_results.html"))
    with pytest.raises(WebSearchError, match="vqd"):
        await runtime.call("duckduckgo_news", {"query": "AI"})


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"query": "  "}, "$.query"),
        ({"query": "x" * 501}, "$.query"),
        ({"query": "AI", "max_results": 0}, "$.max_results"),
        ({"query": "AI", "max_results": 31}, "$.max_results"),
        ({"query": "AI", "safesearch": "strict"}, "$.safesearch"),
        ({"query": "AI", "timelimit": "h"}, "$.timelimit"),
    ],
)
async def test_bad_input_names_the_field_and_sends_nothing(runtime, server, inputs, field):
    with pytest.raises(InvalidInputError) as info:
        await runtime.call("duckduckgo_search", inputs)
    assert field in [e["path"] for e in info.value.errors]
    assert server.requests == []


# -- the page reader, on any text ---------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(
    lambda s: s.split()
)


@given(st.lists(st.tuples(_text, _text), min_size=1, max_size=6))
def test_any_titles_and_excerpts_survive_the_page_escaped(entries):
    from ferrule_duckduckgo.search import parse_results

    blocks = [
        f'<div class="result"><h2 class="result__title"><a class="result__a" '
        f'href="https://example.com/{i}">{html.escape(title)}</a></h2>'
        f'<a class="result__snippet" href="https://example.com/{i}">{html.escape(body)}</a></div>'
        for i, (title, body) in enumerate(entries)
    ]
    results = parse_results("<html><body>" + "".join(blocks) + "</body></html>")
    assert [(r.title, r.body) for r in results] == [
        (" ".join(t.split()), " ".join(b.split())) for t, b in entries
    ]


@given(st.text(max_size=300))
def test_any_text_reads_as_a_list_of_results_never_an_exception(text):
    from ferrule_duckduckgo.search import parse_results

    assert isinstance(parse_results(text), list)
