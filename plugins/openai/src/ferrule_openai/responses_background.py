"""Background mode of OpenAI's Responses API, client side (the component's ``background``
attribute; Agno's ``OpenAIResponses(background=True)``).

The request is the streamed one's body sent with ``background: true``, ``store: true``
(background responses are kept at the provider while they run) and ``stream: false``:
``POST /responses`` answers at once with the response object, ``queued`` or
``in_progress``. `poll` then reads ``GET /responses/{id}`` every ``poll_interval`` seconds
until the response leaves those two states:

- ``completed`` (or ``incomplete``, a finish reason of ``length`` / ``content_filter`` as
  when streamed): its ``output`` becomes the LM contract's items (`response_items`);
- ``failed``: the typed error its ``error.code`` names, with the provider's message;
- ``cancelled`` (by someone else; our own cancellations end the request before that):
  a `ModelError` naming the response.

After ``max_wait`` seconds it is cancelled at the provider (``POST
/responses/{id}/cancel``) and the request ends with a `ProviderTimeoutError`. A request
abandoned while it waits (its run cancelled, its consumer gone, a poll that failed)
cancels the response too, so nothing keeps running, and being billed, for nobody.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from typing import Any

import attrs
from ferrule_kernel import get_logger
from ferrule_kit.errors import ModelError, ProviderProtocolError, ProviderTimeoutError
from ferrule_kit.network.http import HTTPClient

from .responses_wire import PROVIDER, response_items

log = get_logger("ferrule.openai")

#: The states of a response still running at the provider.
RUNNING = ("queued", "in_progress")
#: How long the cancellation of an abandoned response may take before it is given up.
CANCEL_WAIT = 10.0


@attrs.frozen
class Background:
    """How a background response is waited for (the component's attributes)."""

    poll_interval: float = 2.0
    max_wait: float = 600.0


def background_body(body: dict[str, Any]) -> dict[str, Any]:
    """The streamed request's ``body`` as a background request."""
    return {**body, "background": True, "store": True, "stream": False}


def _response(reply: Any, what: str) -> tuple[dict[str, Any], str, str]:
    """(the response object, its id, its status) from a reply, checked."""
    if not isinstance(reply, dict):
        raise ProviderProtocolError(
            f"{what}: the reply is not a response object", provider=PROVIDER
        )
    response_id, status = reply.get("id"), reply.get("status")
    if not isinstance(response_id, str) or not response_id or not isinstance(status, str):
        raise ProviderProtocolError(
            f"{what}: the response object has no id or status", provider=PROVIDER
        )
    return reply, response_id, status


async def _cancel(client: HTTPClient, url: str, response_id: str) -> None:
    """Ask the provider to stop ``response_id``; a failure is only logged (the request
    ends with its own error either way)."""
    try:
        await asyncio.wait_for(client.request_json(f"{url}/{response_id}/cancel", {}), CANCEL_WAIT)
    except (Exception, asyncio.CancelledError) as exc:  # best effort
        log.warning("background_cancel_failed", response_id=response_id, error=type(exc).__name__)


async def poll(
    client: HTTPClient, url: str, body: dict[str, Any], background: Background
) -> AsyncGenerator[dict[str, Any], None]:
    """The items of a background response to ``body`` POSTed to ``url`` (see the module
    docstring)."""
    reply = await client.request_json(url, background_body(body))
    response, response_id, status = _response(reply, f"POST {url}")
    deadline = time.monotonic() + background.max_wait
    ended = False
    try:
        while status in RUNNING:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            await asyncio.sleep(min(background.poll_interval, remaining))
            reply = await client.request_json(f"{url}/{response_id}", method="GET")
            response, _, status = _response(reply, f"GET {url}/{response_id}")
        ended = status not in RUNNING
    finally:
        if not ended:  # out of time, abandoned, or a poll failed: stop it at the provider
            await _cancel(client, url, response_id)
    if not ended:
        raise ProviderTimeoutError(
            f"{PROVIDER}: background response {response_id} still {status} after "
            f"background_max_wait={background.max_wait:g}s; cancelled at the provider",
            provider=PROVIDER,
            response_id=response_id,
            background_max_wait=background.max_wait,
        )
    if status == "cancelled":
        raise ModelError(
            f"{PROVIDER}: background response {response_id} was cancelled at the provider",
            provider=PROVIDER,
            response_id=response_id,
        )
    if status not in ("completed", "incomplete", "failed"):
        raise ProviderProtocolError(
            f"{PROVIDER}: background response {response_id} has the unknown status {status!r}",
            provider=PROVIDER,
            response_id=response_id,
        )
    for item in response_items(response):
        yield item
