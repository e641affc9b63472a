"""`web_fetch`: one page through `http_request` (the same address policy, size limit and
errors), its HTML read as Markdown by markdownify or as text by BeautifulSoup (both
imported on the first call).

Through a proxy (``$FERRULE_WEB_FETCH_PROXY``) the page's own URL is checked against the
address policy too, before the proxy is asked: otherwise the proxy would fetch
``http://169.254.169.254/`` for whoever names it, since only the proxy's address would be
checked (`check_target`).
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit

from .client import http_request
from .errors import HTTPRequestError
from .plugin import PROXY_VARIABLE, HTTPRequestInput, WebFetchOutput
from .policy import AddressPolicyError, AddressRefusedError, Policy

if TYPE_CHECKING:
    from .plugin import WebFetchInput

#: Parts of a page that are not its content (Ailoy's web_fetch leaves out the same).
_LEFT_OUT = ("script", "style", "noscript", "template", "nav", "header", "footer")
_TEXT_TYPES = re.compile(r"^(text/.*|application/(.*\+)?(json|xml)|application/javascript)$")
_BLANK_LINES = re.compile(r"\n{3,}")
_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
    "User-Agent": "Mozilla/5.0 (compatible; ferrule-web-fetch)",
}


def _page_text(html: str, markdown: bool) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for element in soup(list(_LEFT_OUT)):
        element.decompose()
    if markdown:
        from markdownify import MarkdownConverter

        text = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    else:
        text = soup.get_text("\n")
        text = "\n".join(line.strip() for line in text.splitlines())
    return _BLANK_LINES.sub("\n\n", text).strip()


def check_target(url: str) -> None:
    """Raise `AddressRefusedError` unless the address policy allows ``url``'s host: an
    address it spells (in any spelling), or every address its name resolves to here. A
    name that does not resolve here is the proxy's to resolve, on its own network."""
    Policy.from_environment().check_host(urlsplit(url).hostname or "", unresolved_ok=True)


async def web_fetch(inputs: WebFetchInput) -> WebFetchOutput:
    url = inputs.url.strip()
    proxy = inputs.proxy_url or os.environ.get(PROXY_VARIABLE) or None
    if proxy:
        shown = url.split("?", 1)[0]
        try:
            await asyncio.to_thread(check_target, url)
        except AddressPolicyError as exc:
            raise HTTPRequestError(exc.message, reason="configuration") from None
        except AddressRefusedError as exc:
            raise HTTPRequestError(
                f"GET {shown} refused: {exc.message}. web_fetch reaches public addresses only, "
                "through its proxy too; the host may allow others in FERRULE_HTTP_REQUEST_ALLOW",
                url=shown,
                method="GET",
                reason="address_refused",
            ) from None
    target = f"{proxy.rstrip('?')}?{urlencode({'url': url})}" if proxy else url
    response = await http_request(
        HTTPRequestInput(target, headers=dict(_HEADERS), timeout=inputs.timeout)
    )
    status = response["status"]
    shown = url.split("?", 1)[0]
    if status >= 400:
        raise HTTPRequestError(
            f"GET {shown} answered {status}",
            url=shown,
            method="GET",
            reason="status",
            status=status,
        )
    declared = next(
        (v for k, v in response["headers"].items() if k.lower() == "content-type"), "text/html"
    )
    content_type = declared.split(";", 1)[0].strip().lower() or "text/html"
    body: str = response["body"]
    if content_type in ("text/html", "application/xhtml+xml"):
        text = _page_text(body, inputs.format == "markdown")
    elif _TEXT_TYPES.match(content_type):
        text = body.strip()
    else:
        raise HTTPRequestError(
            f"GET {shown} answered {content_type}, which is not text",
            url=shown,
            method="GET",
            reason="not_text",
        )
    truncated = len(text) > inputs.max_chars
    return WebFetchOutput(text[: inputs.max_chars], content_type, truncated)
