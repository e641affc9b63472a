"""Generator tools (Agno's): a tool whose function yields is run to its end, and what it
yielded is its result, each item as text, joined (Agno's); the `CustomEvent`s among the
items are also the run's events, each naming its call (``tool_call_id``), streamed after
the call's `ToolCallStartedEvent` and before its `ToolCallCompletedEvent`."""

from __future__ import annotations

import asyncio
import collections.abc
from typing import Any

import attrs

from .events import CustomEvent


@attrs.frozen
class Yielded:
    """What a generator tool yielded: its result as the model reads it, and its events."""

    text: str
    events: list[CustomEvent]


def is_yielding(result: Any) -> bool:
    """Whether a tool's result is a generator (or another iterator) to run to its end."""
    if isinstance(result, collections.abc.AsyncIterator):
        return True
    return isinstance(result, collections.abc.Iterator) and not isinstance(result, (str, bytes))


async def drained(result: Any, call_id: str) -> Yielded:
    """Run a generator tool's ``result`` to its end (a blocking one in a worker thread,
    so that the run's loop goes on) and gather what it yielded."""
    if isinstance(result, collections.abc.AsyncIterator):
        items = [item async for item in result]
    else:
        items = await asyncio.to_thread(list, result)
    events = [item for item in items if isinstance(item, CustomEvent)]
    for event in events:
        event.tool_call_id = call_id
    return Yielded("".join(str(item) for item in items), events)
