"""One reply of a route whose stream is named server-sent events (Anthropic's Messages,
OpenAI's Responses): the model's ``infer`` items go through the route's builder, whole
or as events.

A stream waits for the model's first item before answering, so a model that fails at
once gets an error status; a failure after the headers is the builder's closing error
event, its message redacted; a client that leaves closes the model's stream with the
request (``items`` is closed by the caller's ``aclosing``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Generic, Protocol, TypeVar

import attrs
from aiohttp import web
from ferrule_kernel import get_logger

from .gate import dumps
from .openai_api import OpenAIRoutes
from .openai_wire import OpenAIError

log = get_logger("ferrule.server")

EventT = TypeVar("EventT")


class ReplyBuilder(Protocol[EventT]):
    """What a route's reply builder does with the model's items (each call returns the
    events to send, in order)."""

    def start(self) -> list[EventT]: ...
    def add(self, item: dict[str, Any]) -> list[EventT]: ...
    def finish(self) -> list[EventT]: ...
    def fail(self, error: OpenAIError) -> list[EventT]: ...


@attrs.frozen
class EventStream(Generic[EventT]):
    """A route's way of answering: ``named`` gives an event's SSE name and data."""

    routes: OpenAIRoutes
    named: Callable[[EventT], tuple[str, Any]]

    async def answer(
        self,
        request: web.Request,
        builder: ReplyBuilder[EventT],
        items: AsyncIterator[dict[str, Any]],
        *,
        stream: bool,
        whole: Callable[[], Any],
    ) -> web.StreamResponse:
        """The reply: ``whole()`` as JSON once every item is in, or the events."""
        if stream:
            return await self._stream(request, builder, items)
        async for item in items:
            builder.add(item)
        builder.finish()
        return web.Response(body=dumps(whole()), content_type="application/json")

    async def _stream(
        self,
        request: web.Request,
        builder: ReplyBuilder[EventT],
        items: AsyncIterator[dict[str, Any]],
    ) -> web.StreamResponse:
        first = await anext(items, None)
        response = await self.routes.gate.open_event_stream(request)

        async def send(events: list[EventT]) -> None:
            if events:
                await response.write(b"".join(self._encoded(event) for event in events))

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
                error = self.routes.stream_error(request, exc)
                error.message = self.routes.gate.redact(error.message)
                last = builder.fail(error)
            await send(last)
            await response.write_eof()
        except ConnectionError:  # the client left: its producer is closed with the request
            log.debug("client_disconnected", path=request.path)
        return response

    def _encoded(self, event: EventT) -> bytes:
        name, data = self.named(event)
        return b"event: " + name.encode() + b"\ndata: " + dumps(data) + b"\n\n"
