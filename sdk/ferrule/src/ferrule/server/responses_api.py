"""``POST /v1/responses``: OpenAI's Responses API, beside chat completions, on the same
models (`ModelCatalog`) and with the same checks and errors (`OpenAIRoutes.handler`).
The translation is `responses_wire`'s (the request) and `responses_builder`'s (the reply).

A plain request gets the ``response`` object; ``stream: true`` gets its server-sent
events (``event: <type>`` and ``data: <event>``, numbered by ``sequence_number``, ending
with ``response.completed``, ``response.incomplete`` or ``response.failed``; no
``[DONE]``). As for chat completions, a stream waits for the model's first item before
answering, so a model that fails at once gets an error status; a failure after that is a
``response.failed`` event carrying the error."""

from __future__ import annotations

import contextlib
from typing import Any

from aiohttp import web

from .event_stream import EventStream
from .openai_api import OpenAIRoutes
from .responses_builder import ResponseBuilder
from .responses_wire import responses_request_from_openai


class ResponsesRoutes:
    """The Responses route of one server, beside its other OpenAI routes."""

    def __init__(self, openai: OpenAIRoutes) -> None:
        self.openai = openai
        self.events: EventStream[dict[str, Any]] = EventStream(openai, _named)

    def add_to(self, router: web.UrlDispatcher, prefix: str) -> None:
        self.openai.add_route(router, "POST", f"{prefix}/v1/responses", self.responses)

    async def responses(self, request: web.Request) -> web.StreamResponse:
        body = responses_request_from_openai(await self.openai.gate.read_json(request))
        items = await self.openai.infer(body.model, body.inputs, body.renames)
        builder = ResponseBuilder(body)
        async with contextlib.aclosing(items):
            return await self.events.answer(
                request, builder, items, stream=body.stream, whole=builder.response
            )


def _named(event: dict[str, Any]) -> tuple[str, Any]:
    return event["type"], event
