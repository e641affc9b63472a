"""Server-sent events: the one ``text/event-stream`` reader (`sse_events`) and its events.

`sse_events` parses bytes as the WHATWG ``text/event-stream`` format: LF, CRLF or CR line
ends, multi-line ``data``, comments, ``event``/``id``/``retry`` fields. It splits whole
network reads at once (no per-line await, no re-scanning of buffered bytes). Provider
plugins get it, with the HTTP client that feeds it, from `ferrule_kit.network.http`.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

import attrs

from ferrule_kit.errors import ProviderProtocolError

__all__ = ["SSEEvent", "sse_events"]


@attrs.define(slots=True)
class SSEEvent:
    """One dispatched server-sent event. ``event`` defaults to ``"message"``; ``id`` is the
    last event id seen so far (it persists across events, per the spec); ``retry`` is the
    reconnection time in milliseconds if this event's block set one."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None

    def json_data(self, provider: str) -> Any:
        """``data`` parsed as JSON; `ProviderProtocolError`, quoting what came, if it is not."""
        try:
            return json.loads(self.data)
        except ValueError:
            raise ProviderProtocolError(
                f"{provider} sent a stream event that is not JSON: {self.data[:200]!r}",
                provider=provider,
                status=None,
                provider_message=self.data[:200],
            ) from None


async def sse_events(chunks: AsyncIterable[bytes]) -> AsyncGenerator[SSEEvent, None]:
    """Parse a ``text/event-stream`` body, given as byte chunks of any size, into events.

    Follows https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation:
    a leading BOM is dropped, invalid UTF-8 becomes U+FFFD, a block without ``data`` is
    not dispatched, and an unterminated block at end of stream is discarded. The source
    is closed when this iterator is (so abandoning the events drops the connection).
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending: list[str] = []  # pieces of the line not yet ended (joined once, when it ends)
    data: list[str] = []
    event_type = ""
    last_id: str | None = None
    retry: int | None = None
    held_cr = False  # a chunk ended in CR: the next may start with its LF
    first = True
    try:
        async for chunk in chunks:
            text = decoder.decode(chunk)
            if not text:
                continue
            if first:
                first = False
                if text[0] == "\ufeff":
                    text = text[1:]
            if held_cr:
                held_cr = False
                if text[:1] == "\n":
                    text = text[1:]
            if "\r" in text:
                held_cr = text[-1] == "\r"
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            lines = text.split("\n")
            if pending:
                pending.append(lines[0])
                lines[0] = "".join(pending)
                pending = []
            tail = lines.pop()
            if tail:
                pending.append(tail)
            for line in lines:
                if not line:
                    if data:
                        yield SSEEvent("\n".join(data), event_type or "message", last_id, retry)
                        data = []
                    event_type = ""
                    retry = None
                elif line.startswith("data:"):
                    data.append(line[6:] if line[5:6] == " " else line[5:])
                elif line[0] == ":":
                    continue
                else:
                    field, colon, value = line.partition(":")
                    if colon and value[:1] == " ":
                        value = value[1:]
                    if field == "data":  # "data" with no colon: an empty data line
                        data.append(value)
                    elif field == "event":
                        event_type = value
                    elif field == "id":
                        if "\0" not in value:
                            last_id = value
                    elif field == "retry":
                        if value.isascii() and value.isdigit():
                            retry = int(value)
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
