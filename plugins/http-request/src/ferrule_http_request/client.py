"""The request itself, over aiohttp (imported here, on the first call only).

Failures without an HTTP response become typed errors that say what happened and where,
without the secrets a request may carry: header values, the URL's password and query
string appear in no message (the URL is shown as scheme://host:port/path).

Every connection, redirects included, goes only where `policy` allows
(`ferrule_kit.network.checked_connector`: an address the URL spells, and every address a host
name resolves to, checked before connecting). A response body is read up to
``FERRULE_HTTP_REQUEST_MAX_BYTES`` (10 MiB by default).
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp
from ferrule_kernel import InvalidInputError, get_logger, scrub_secrets
from ferrule_kit.network.checked_connector import CheckedConnector

from .errors import HTTPRequestError, HTTPRequestTimeoutError
from .policy import AddressPolicyError, AddressRefusedError, Policy

if TYPE_CHECKING:
    from .plugin import HTTPRequestInput

log = get_logger("ferrule.http_request")

MAX_BYTES_VARIABLE = "FERRULE_HTTP_REQUEST_MAX_BYTES"
DEFAULT_MAX_BYTES = 10 * 2**20


def _max_bytes() -> int:
    value = os.environ.get(MAX_BYTES_VARIABLE, "")
    try:
        return int(value) if value.strip() else DEFAULT_MAX_BYTES
    except ValueError:
        raise HTTPRequestError(
            f"{MAX_BYTES_VARIABLE} must be a number of bytes, got {value!r}",
            reason="configuration",
        ) from None


async def http_request(inputs: HTTPRequestInput) -> dict[str, Any]:
    url = inputs.url.strip()
    shown = _shown_url(url)
    target = f"{inputs.method} {shown}"
    secrets = _secrets(url, inputs.headers)
    try:
        policy = Policy.from_environment()
    except AddressPolicyError as exc:
        raise HTTPRequestError(exc.message, reason="configuration") from None
    max_bytes = _max_bytes()
    timeout = aiohttp.ClientTimeout(total=inputs.timeout)
    try:
        async with aiohttp.ClientSession(
            timeout=timeout, connector=CheckedConnector(policy)
        ) as session:
            async with session.request(
                inputs.method,
                url,
                headers=inputs.headers,
                data=inputs.body,  # a str: sent as UTF-8, text/plain unless headers say
            ) as response:
                raw = await _read(response, max_bytes, target, shown, inputs.method)
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
    except AddressRefusedError as exc:
        raise HTTPRequestError(
            f"{target} refused: {exc.message}. http_request reaches public addresses only; "
            "the host may allow others in FERRULE_HTTP_REQUEST_ALLOW",
            url=shown,
            method=inputs.method,
            reason="address_refused",
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
            f"{target} failed: cannot connect to {exc.host}:{exc.port}: {scrub_secrets(why, secrets)}",
            url=shown,
            method=inputs.method,
            reason=reason,
        ) from None
    except aiohttp.ClientError as exc:
        raise HTTPRequestError(
            f"{target} failed: {type(exc).__name__}: {scrub_secrets(str(exc), secrets)}",
            url=shown,
            method=inputs.method,
            reason=type(exc).__name__,
        ) from None
    log.debug("http_request", method=inputs.method, url=shown, status=status, bytes=len(raw))
    # status_code: the same number under Ailoy 0.1's name (its http_request's answer)
    return {"status": status, "status_code": status, "headers": headers, "body": body}


async def _read(
    response: aiohttp.ClientResponse, max_bytes: int, target: str, shown: str, method: str
) -> bytes:
    """The body, refused as soon as it grows past ``max_bytes`` (decompressed)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > max_bytes:
            raise HTTPRequestError(
                f"{target} failed: the response body is larger than the limit of "
                f"{max_bytes} bytes ({MAX_BYTES_VARIABLE})",
                url=shown,
                method=method,
                reason="too_large",
            )
        chunks.append(chunk)
    return b"".join(chunks)


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


def _charset(declared: str | None) -> str:
    import codecs

    if declared:
        try:
            return codecs.lookup(declared).name
        except LookupError:
            pass
    return "utf-8"
