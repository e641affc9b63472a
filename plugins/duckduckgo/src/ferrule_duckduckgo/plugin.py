"""Registers `duckduckgo_search` (web results) and `duckduckgo_news` (news articles).

The input classes and their checks live here (standard library and attrs only); the
requests, and aiohttp, are imported on the first search (`ferrule_duckduckgo.search`).
"""

from __future__ import annotations

from typing import Literal

import attrs
from ferrule_kernel import (
    OperatorSpec,
    hookimpl,
    in_range,
    local_only,
    text_limit,
)
from ferrule_kit.network.hostpolicy import host_policy

from . import errors as _errors  # noqa: F401  (registers the error kinds for the wire)

#: Moves every request to another server (a proxy, a mirror, a loopback server in tests):
#: ``{url}/html/`` for web results, ``{url}/`` and ``{url}/news.js`` for news.
ENDPOINT_VARIABLE = "FERRULE_DUCKDUCKGO_URL"
#: The most ``max_results`` a call may ask for. One page of results is read: a page
#: holding fewer gives fewer.
MAX_RESULTS = 30
MAX_QUERY_LENGTH = 500


@attrs.frozen
class SearchInput:
    """One DuckDuckGo query. ``region`` is DuckDuckGo's ``kl`` code (``wt-wt``: no region,
    ``us-en``, ``de-de``, ...); ``timelimit`` keeps results of the last day, week, month or
    year; ``base_url`` (default: ``$FERRULE_DUCKDUCKGO_URL``, else DuckDuckGo's own hosts)
    is taken from code in the process only, never from a network client."""

    query: str = attrs.field(validator=text_limit(MAX_QUERY_LENGTH, empty=False))
    max_results: int = attrs.field(default=5, validator=in_range(1, MAX_RESULTS))
    region: str = "wt-wt"
    safesearch: Literal["on", "moderate", "off"] = attrs.field(
        default="moderate", metadata=host_policy("the safe-search filter")
    )
    timelimit: Literal["d", "w", "m", "y"] | None = None
    timeout: float = attrs.field(
        default=10.0, validator=in_range(0.001, 120.0), metadata=host_policy("the timeout")
    )
    base_url: str | None = attrs.field(
        default=None,
        validator=local_only("a URL for the server to connect to"),
        metadata=host_policy("the search endpoint"),
    )


@attrs.frozen
class WebResult:
    title: str
    href: str
    body: str


@attrs.frozen
class SearchOutput:
    results: list[WebResult]


@attrs.frozen
class NewsResult:
    #: ISO 8601, UTC.
    date: str
    title: str
    body: str
    url: str
    image: str | None
    source: str


@attrs.frozen
class NewsOutput:
    results: list[NewsResult]


@hookimpl
def ferrule_register_operators() -> list[OperatorSpec]:
    return [
        OperatorSpec(
            "duckduckgo_search",
            "ferrule_duckduckgo.search:duckduckgo_search",
            SearchInput,
            description=(
                "Search the web with DuckDuckGo. Returns {results: [{title, href, body}]}, "
                "at most max_results of them."
            ),
            outputs=SearchOutput,
        ),
        OperatorSpec(
            "duckduckgo_news",
            "ferrule_duckduckgo.search:duckduckgo_news",
            SearchInput,
            description=(
                "Search recent news with DuckDuckGo. Returns {results: [{date, title, body, "
                "url, image, source}]}, at most max_results of them."
            ),
            outputs=NewsOutput,
        ),
    ]
