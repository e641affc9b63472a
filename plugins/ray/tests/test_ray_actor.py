"""The replica's side of a stream, without Ray: `ComponentHost.stream` sends items in
order, batches what waits, and pauses the component when ``window`` items wait unread."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from ferrule_ray.actor import ComponentHost, Failure


class Counting:
    """A component whose stream yields 0, 1, 2, ... (``arg`` items, or for ever) and
    fails after the third when ``arg`` is 5; it records how far it got."""

    def __init__(self) -> None:
        self.produced = 0
        self.closed = False

    async def count(self, arg: int | None) -> AsyncIterator[dict[str, int]]:
        i = 0
        try:
            while arg is None or i < arg:
                self.produced = i + 1
                yield {"i": i}
                if arg == 5 and i == 2:
                    raise ValueError("three is enough")
                i += 1
        finally:
            self.closed = True


def host_of(component: Counting) -> ComponentHost:
    host = ComponentHost("counting", "c", {})
    host._instance = component  # already built: no kernel needed here
    return host


async def test_a_slow_reader_pauses_the_component_at_the_window():
    component = Counting()
    window = 3
    stream = host_of(component).stream("count", None, window=window)
    got: list[Any] = await stream.__anext__()
    await asyncio.sleep(0.05)  # the reader stalls
    # what was taken, what waits (the window), and the item blocked on the full window
    assert component.produced <= len(got) + window + 1
    more: list[Any] = await stream.__anext__()
    assert len(more) <= window + 1
    assert [item["i"] for item in got + more] == list(range(len(got) + len(more)))
    await stream.aclose()  # the reader leaves: the component's stream is closed
    assert component.closed


async def test_items_then_the_failure_arrive_in_order():
    component = Counting()
    items = [item async for batch in host_of(component).stream("count", 5, 2) for item in batch]
    assert items[:3] == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert len(items) == 4 and isinstance(items[3], Failure)
    error = items[3].exception()
    assert isinstance(error, ValueError) and str(error) == "three is enough"
    assert component.closed
