"""Anthropic's Messages API: ``POST /v1/messages`` (streamed as server-sent events or
not) and ``POST /v1/messages/count_tokens``, on the same models as the OpenAI routes
(`ModelCatalog`), behind the same gate (Host and Origin, CORS, body limits) and the same
token, sent the way Anthropic's clients send a key: ``x-api-key: <token>`` or
``Authorization: Bearer <token>``. Errors are in Anthropic's shape
(``{"type": "error", "error": {"type", "message"}}``); the translation is
`anthropic_wire`'s (the request) and `anthropic_builder`'s (the reply).

A stream is ``event: <type>`` / ``data: <json>`` pairs: ``message_start``, ``ping``, for
each block ``content_block_start``, its ``content_block_delta`` events and
``content_block_stop``, then ``message_delta`` (stop reason, usage) and
``message_stop``. As on the other routes, a stream waits for the model's first item
before answering, so a model that fails at once gets an error status; a failure after
that is an ``error`` event.

``count_tokens`` asks the model itself: its ``count_tokens`` method where its component
type declares one (`ferrule_kit.models.lmspec.count_tokens_method`: exact, nothing generated);
else the request's prompt, generated for one token with reasoning off, and the input
tokens it reports (for an API model, a request it bills).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from typing import Any

from aiohttp import web

from .anthropic_builder import MessageBuilder
from .anthropic_wire import (
    MessagesRequest,
    anthropic_error_body,
    messages_request_from_anthropic,
)
from .event_stream import EventStream
from .gate import Handler, dumps
from .openai_api import OpenAIRoutes
from .openai_wire import OpenAIError

Event = tuple[str, dict[str, Any]]

#: The language-model method that counts a prompt without generating.
COUNT_TOKENS = "count_tokens"


class AnthropicRoutes:
    """The Messages routes of one server, beside its OpenAI routes."""

    def __init__(self, openai: OpenAIRoutes) -> None:
        self.openai = openai
        self.gate = openai.gate
        self.events: EventStream[Event] = EventStream(openai, _named)

    def add_to(self, router: web.UrlDispatcher, prefix: str) -> None:
        for path, handle in (
            (f"{prefix}/v1/messages", self.messages),
            (f"{prefix}/v1/messages/count_tokens", self.count_tokens),
        ):
            router.add_route("POST", path, self.handler(handle))
            router.add_route("OPTIONS", path, self.handler(self.gate.preflight, preflight=True))

    def authorized(self, request: web.Request) -> bool:
        """The token as ``x-api-key`` (Anthropic's clients) or a bearer token."""
        token = self.gate.token
        if not token:
            return True
        key = request.headers.get("x-api-key")
        if key is not None:
            return hmac.compare_digest(key.strip().encode(), token.encode())
        return self.gate.authorized(request)

    def require_key(self, request: web.Request) -> None:
        if not self.authorized(request):
            raise OpenAIError(401, "invalid x-api-key", code="invalid_api_key")

    def handler(self, handle: Handler, preflight: bool = False) -> Handler:
        """``handle`` behind the OpenAI routes' gate and failure handling, with this API's
        key check and error shape."""
        return self.openai.handler(handle, preflight, authorize=self.require_key, error=self.error)

    def error(self, exc: OpenAIError) -> web.Response:
        return web.Response(
            body=dumps(self.gate.redact(anthropic_error_body(exc))),
            status=exc.status,
            content_type="application/json",
            headers=exc.headers,
        )

    async def count_tokens(self, request: web.Request) -> web.Response:
        body = messages_request_from_anthropic(await self.gate.read_json(request), counting=True)
        catalog = self.openai.catalog
        if COUNT_TOKENS in await asyncio.to_thread(catalog.methods, body.model):
            prepared = await catalog.prepare(body.model, COUNT_TOKENS, body.inputs, body.renames)
            counted = (await prepared.run())["input_tokens"]
        else:
            counted = await self._count_by_inference(body)
        return web.Response(body=dumps({"input_tokens": counted}), content_type="application/json")

    async def _count_by_inference(self, body: MessagesRequest) -> int:
        """The input tokens of a model without ``count_tokens``: the prompt as it reads it,
        one token generated."""
        inputs = {**body.inputs, "max_tokens": 1, "reasoning": False}
        inputs.pop("output_schema", None)
        if inputs.get("tool_choice") not in (None, "auto"):
            inputs["tool_choice"] = "auto"
        items = await self.openai.infer(body.model, inputs, body.renames)
        usage: dict[str, Any] = {}
        async with contextlib.aclosing(items):
            async for item in items:
                usage = item.get("usage") or usage
        counted: int = usage.get("input_tokens", 0)
        return counted

    async def messages(self, request: web.Request) -> web.StreamResponse:
        body = messages_request_from_anthropic(await self.gate.read_json(request))
        items = await self.openai.infer(body.model, body.inputs, body.renames)
        builder = MessageBuilder(body.model)
        async with contextlib.aclosing(items):
            return await self.events.answer(
                request, builder, items, stream=body.stream, whole=builder.message
            )


def _named(event: Event) -> tuple[str, Any]:
    return event
