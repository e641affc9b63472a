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
from ferrule_kernel import get_logger

from .gate import dumps
from .openai_api import OpenAIRoutes
from .responses_builder import ResponseBuilder
from .responses_wire import responses_request_from_openai

log = get_logger("ferrule.server")


class ResponsesRoutes:
    """The Responses route of one server, beside its other OpenAI routes."""

    def __init__(self, openai: OpenAIRoutes) -> None:
        self.openai = openai

    def add_to(self, router: web.UrlDispatcher, prefix: str) -> None:
        self.openai.add_route(router, "POST", f"{prefix}/v1/responses", self.responses)

    async def responses(self, request: web.Request) -> web.StreamResponse:
        body = responses_request_from_openai(await self.openai.gate.read_json(request))
        items = await self.openai.infer(body.model, body.inputs, body.renames)
        builder = ResponseBuilder(body)
        async with contextlib.aclosing(items):
            if body.stream:
                return await self._stream(request, builder, items)
            async for item in items:
                builder.add(item)
        builder.finish()
        return web.Response(body=dumps(builder.response()), content_type="application/json")

    async def _stream(
        self, request: web.Request, builder: ResponseBuilder, items: Any
    ) -> web.StreamResponse:
        # The first item before the headers: an error that comes at once (a model that
        # fails to load, a refused image) still gets its HTTP status.
        first = await anext(items, None)
        response = await self.openai.gate.open_event_stream(request)

        async def send(events: list[dict[str, Any]]) -> None:
            if events:
                await response.write(
                    b"".join(
                        b"event: " + e["type"].encode() + b"\ndata: " + dumps(e) + b"\n\n"
                        for e in events
                    )
                )

        try:
            await send(builder.start())
            try:
                item = first
                while item is not None:
                    await send(builder.add(item))
                    item = await anext(items, None)
                last = builder.finish()
            except ConnectionError:
                raise
            except BaseException as exc:  # after the headers, an error ends the stream as an event
                error = self.openai.stream_error(request, exc)
                error.message = self.openai.gate.redact(error.message)
                last = builder.fail(error)
            await send(last)
            await response.write_eof()
        except ConnectionError:  # the client left: its producer is closed with the request
            log.debug("client_disconnected", path=request.path)
        return response
