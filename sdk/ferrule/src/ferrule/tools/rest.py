"""The call a REST tool (`Tool.rest_api`) makes: URL placeholders filled, the other
arguments as query or JSON body, secrets kept out of errors. aiohttp is imported on the
first call."""

from __future__ import annotations

import json
from typing import Any

from .errors import ToolError

__all__ = ["rest_call"]


async def rest_call(
    method: str,
    url: str,
    placeholders: list[str],
    arguments: dict[str, Any],
    headers: dict[str, str],
    secrets: list[str],
) -> Any:
    from urllib.parse import quote

    import aiohttp
    from ferrule_kit.network.http import scrub

    rest = dict(arguments)
    target = url
    for name in placeholders:
        target = target.replace("{" + name + "}", quote(str(rest.pop(name, "")), safe=""))
    params = json_body = None
    if method in ("GET", "DELETE", "HEAD") and rest:
        params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in rest.items()}
    elif rest:
        json_body = rest
    try:
        async with aiohttp.ClientSession() as session:
            async with session.request(
                method, target, params=params, json=json_body, headers=headers
            ) as response:
                body = await response.read()
                status = response.status
                content_type = response.headers.get("Content-Type", "")
    except (aiohttp.ClientError, OSError) as exc:
        # aiohttp errors can hold the request (headers included): keep only scrubbed text
        raise ToolError(
            scrub(f"{method} {target} failed: {type(exc).__name__}: {exc}", secrets)
        ) from None
    text = body.decode("utf-8", errors="replace")
    if status >= 400:
        raise ToolError(
            scrub(f"{method} {target} answered HTTP {status}: {text[:500]}", secrets), status=status
        )
    if "json" in content_type:
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text
