"""The request itself, over aiohttp (imported here, on the first call only).

Failures without an HTTP response become typed errors that say what happened and where,
without the secrets a request may carry: header values, the URL's password and query
string appear in no message (the URL is shown as scheme://host:port/path).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp
from ferrule_kernel import InvalidInputError, get_logger

from .errors import HTTPRequestError, HTTPRequestTimeoutError

if TYPE_CHECKING:
    from .plugin import HTTPRequestInput

log = get_logger("ferrule.http_request")


async def http_request(inputs: HTTPRequestInput) -> dict[str, Any]:
    url = inputs.url.strip()
    shown = _shown_url(url)
    target = f"{inputs.method} {shown}"
    secrets = _secrets(url, inputs.headers)
    timeout = aiohttp.ClientTimeout(total=inputs.timeout)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.request(
                inputs.method,
                url,
                headers=inputs.headers,
                data=inputs.body,  # a str: sent as UTF-8, text/plain unless headers say
            ) as response:
                raw = await response.read()
                status = response.status
                headers: dict[str, str] = {}
                for name, value in response.headers.items():  # repeated headers: joined
                    headers[name] = f"{headers[name]}, {value}" if name in headers else value
                body = raw.decode(_charset(response.charset), errors="replace")
    except (asyncio.TimeoutError, TimeoutError):
        raise HTTPRequestTimeoutError(
            f"{target} timed out after {inputs.timeout:g} s",
            url=shown,
            method=inputs.method,
            timeout=inputs.timeout,
        ) from None
    except aiohttp.InvalidURL:
        raise InvalidInputError(f"url is not a valid URL: {shown}", field="$.url") from None
    except aiohttp.ClientConnectorError as exc:
        if isinstance(exc.os_error, ConnectionRefusedError):
            why, reason = "connection refused", "connection_refused"
        else:
            why = exc.os_error.strerror or str(exc.os_error) or type(exc.os_error).__name__
            reason = "connect"
        raise HTTPRequestError(
            f"{target} failed: cannot connect to {exc.host}:{exc.port}: {_scrub(why, secrets)}",
            url=shown,
            method=inputs.method,
            reason=reason,
        ) from None
    except aiohttp.ClientError as exc:
        raise HTTPRequestError(
            f"{target} failed: {type(exc).__name__}: {_scrub(str(exc), secrets)}",
            url=shown,
            method=inputs.method,
            reason=type(exc).__name__,
        ) from None
    log.debug("http_request", method=inputs.method, url=shown, status=status, bytes=len(raw))
    return {"status": status, "headers": headers, "body": body}


def _shown_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _secrets(url: str, headers: dict[str, str]) -> list[str]:
    parts = urlsplit(url)
    found = [parts.password or "", parts.query, *headers.values()]
    return sorted((s for s in found if s), key=len, reverse=True)


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def _charset(declared: str | None) -> str:
    import codecs

    if declared:
        try:
            return codecs.lookup(declared).name
        except LookupError:
            pass
    return "utf-8"
