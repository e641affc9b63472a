"""The two searches, read from DuckDuckGo's endpoints the way the ddgs library reads them.

Web results: ``POST https://html.duckduckgo.com/html/`` with the form ``q`` (query), ``kl``
(region), ``kp`` (safe search: 1, -1, -2), ``df`` (time limit), ``b`` (empty); the reply
is an HTML page holding one ``a.result__a`` (title and link) and one ``.result__snippet``
(the excerpt) per result. Ads link to ``duckduckgo.com/y.js``; older pages wrap each link
in a ``//duckduckgo.com/l/?uddg=<url>`` redirect.

News: ``GET https://duckduckgo.com/?q=...`` gives a page carrying the query's ``vqd``
token, then ``GET https://duckduckgo.com/news.js`` with ``l`` (region), ``o=json``,
``noamp=1``, ``q``, ``vqd``, ``p`` (safe search: 1, -1, -2) and ``df`` answers
``{"results": [{"date": <unix seconds>, "title", "excerpt", "url", "image", "source"}]}``.

DuckDuckGo answers a client it thinks too busy with 202, 403, 418 or 429
(`WebSearchRateLimitError`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from html import unescape
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .errors import WebSearchError, WebSearchRateLimitError, WebSearchTimeoutError
from .plugin import (
    ENDPOINT_VARIABLE,
    NewsOutput,
    NewsResult,
    SearchInput,
    SearchOutput,
    WebResult,
)

HTML_URL = "https://html.duckduckgo.com/html/"
SITE_URL = "https://duckduckgo.com"
#: A reply larger than this is not a results page.
MAX_REPLY_BYTES = 4 * 1024 * 1024
RATE_LIMITED = frozenset({202, 403, 418, 429})
SAFESEARCH = {"on": "1", "moderate": "-1", "off": "-2"}
_HEADERS = {
    "User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Referer": "https://duckduckgo.com/",
}
_TAGS = re.compile(r"<[^>]*>")
_VQD = re.compile(rb"""vqd=["']?([0-9-]+)""")


def endpoints(base_url: str | None) -> tuple[str, str]:
    """(the web-results URL, the site URL for news), moved by ``base_url`` or
    ``$FERRULE_DUCKDUCKGO_URL`` to one server."""
    base = base_url or os.environ.get(ENDPOINT_VARIABLE)
    if base:
        base = base.rstrip("/")
        return f"{base}/html/", base
    return HTML_URL, SITE_URL


async def _fetch(
    method: str,
    url: str,
    timeout: float,
    *,
    data: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
) -> bytes:
    import aiohttp

    where = urlsplit(url)._replace(query="").geturl()
    try:
        async with (
            aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=timeout), headers=_HEADERS
            ) as session,
            session.request(method, url, data=data, params=params, allow_redirects=False) as reply,
        ):
            if reply.status in RATE_LIMITED:
                raise WebSearchRateLimitError(
                    f"DuckDuckGo refused the search as too many requests ({reply.status}); "
                    "try again later",
                    status=reply.status,
                    url=where,
                )
            if reply.status != 200:
                raise WebSearchError(
                    f"{where} answered {reply.status} {reply.reason or ''}".rstrip(),
                    status=reply.status,
                    url=where,
                )
            body = b""
            while chunk := await reply.content.read(65536):
                body += chunk
                if len(body) > MAX_REPLY_BYTES:
                    break
    except asyncio.TimeoutError:
        raise WebSearchTimeoutError(
            f"no complete reply from {where} within {timeout:g} s", url=where
        ) from None
    except aiohttp.ClientError as exc:
        raise WebSearchError(
            f"could not reach {where}: {type(exc).__name__}: {exc}", url=where
        ) from None
    if len(body) > MAX_REPLY_BYTES:
        raise WebSearchError(f"{where} sent more than {MAX_REPLY_BYTES} bytes", url=where)
    return body


def _text(html: str) -> str:
    return " ".join(unescape(_TAGS.sub("", html)).split())


def result_url(href: str) -> str:
    """The result's own URL: ``//duckduckgo.com/l/?uddg=<url>`` redirects unwrapped."""
    href = href.strip()
    parts = urlsplit(href if "://" in href else "https:" + href if href.startswith("//") else href)
    if parts.path == "/l/" and parts.hostname and parts.hostname.endswith("duckduckgo.com"):
        target = parse_qs(parts.query).get("uddg")
        if target:
            return target[0]
    return href


def _is_ad(href: str) -> bool:
    return "duckduckgo.com/y.js" in href or href.startswith("http://www.google.com/search?q=")


class _ResultsPage(HTMLParser):
    """Collects (title, href, excerpt) from a results page, by the classes DuckDuckGo's
    HTML endpoint marks them with."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[dict[str, Any]] = []
        self._field: str | None = None
        self._tag = ""
        self._depth = 0

    def handle_starttag(self, tag: str, attributes: list[tuple[str, str | None]]) -> None:
        if self._field is not None:
            self._depth += tag == self._tag
            return
        named = dict(attributes)
        classes = (named.get("class") or "").split()
        if tag == "a" and "result__a" in classes:
            self.found.append({"title": [], "href": named.get("href") or "", "body": []})
            self._field, self._tag, self._depth = "title", tag, 0
        elif "result__snippet" in classes and self.found and not self.found[-1]["body"]:
            self._field, self._tag, self._depth = "body", tag, 0

    def handle_endtag(self, tag: str) -> None:
        if self._field is not None and tag == self._tag:
            if self._depth == 0:
                self._field = None
            else:
                self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self.found[-1][self._field].append(data)


def parse_results(page: str) -> list[WebResult]:
    """The organic results of an HTML results page, in order, ads and repeats left out."""
    parser = _ResultsPage()
    parser.feed(page)
    parser.close()
    results: list[WebResult] = []
    seen: set[str] = set()
    for entry in parser.found:
        href = result_url(entry["href"])
        if not href or _is_ad(href) or href in seen:
            continue
        seen.add(href)
        title = " ".join("".join(entry["title"]).split())
        body = " ".join("".join(entry["body"]).split())
        results.append(WebResult(title, href, body))
    return results


def parse_news(reply: bytes, url: str) -> list[NewsResult]:
    """The articles of a ``news.js`` reply, repeats left out."""
    try:
        data = json.loads(reply)
        rows = data["results"]
        if not isinstance(rows, list):
            raise TypeError("results is not a list")
        results: list[NewsResult] = []
        seen: set[str] = set()
        for row in rows:
            link = row["url"]
            if link in seen:
                continue
            seen.add(link)
            date = datetime.fromtimestamp(int(row["date"]), timezone.utc).isoformat()
            results.append(
                NewsResult(
                    date=date,
                    title=_text(str(row["title"])),
                    body=_text(str(row.get("excerpt") or "")),
                    url=str(link),
                    image=str(row["image"]) if row.get("image") else None,
                    source=str(row.get("source") or ""),
                )
            )
    except (ValueError, KeyError, TypeError, OverflowError, OSError) as exc:
        raise WebSearchError(
            f"{url} sent a reply not in news.js's shape: {type(exc).__name__}: {exc}", url=url
        ) from None
    return results


async def duckduckgo_search(inputs: SearchInput) -> SearchOutput:
    html_url, _ = endpoints(inputs.base_url)
    form = {"q": inputs.query, "b": "", "kl": inputs.region, "kp": SAFESEARCH[inputs.safesearch]}
    if inputs.timelimit:
        form["df"] = inputs.timelimit
    page = await _fetch("POST", html_url, inputs.timeout, data=form)
    results = parse_results(page.decode("utf-8", errors="replace"))
    return SearchOutput(results[: inputs.max_results])


async def duckduckgo_news(inputs: SearchInput) -> NewsOutput:
    _, site = endpoints(inputs.base_url)
    page = await _fetch("GET", f"{site}/", inputs.timeout, params={"q": inputs.query})
    token = _VQD.search(page)
    if token is None:
        raise WebSearchError(f"{site}/ sent a page without the query's vqd token", url=site)
    params = {
        "l": inputs.region,
        "o": "json",
        "noamp": "1",
        "q": inputs.query,
        "vqd": token.group(1).decode(),
        "p": SAFESEARCH[inputs.safesearch],
    }
    if inputs.timelimit:
        params["df"] = inputs.timelimit
    reply = await _fetch("GET", f"{site}/news.js", inputs.timeout, params=params)
    return NewsOutput(parse_news(reply, f"{site}/news.js")[: inputs.max_results])
