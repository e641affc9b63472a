"""A request as the decode loop sees it (`Sequence`, in a `Slot` of the context), and the
hand-off (`Job`) between a model's decode thread and the ``infer`` generators on the loop.

The decode thread puts a request's stream items in its job's outbox while it samples, and
hands a step's items over (`Job.flush`) just before the next ``llama_decode``, which
releases the GIL for the whole step: the loop then streams them while llama.cpp computes.
Handed over one at a time, each woke the loop at once, and the loop's Python held the GIL
the decode thread wanted back between its ctypes calls; on the bench's 0.5B model that
was ~1 ms of a ~100 ms step spent waiting.
"""

from __future__ import annotations

import asyncio
import codecs
import threading
from typing import Any

from ferrule_kernel import FerruleError

from .formats import StreamParser
from .sampling import Sampler
from .stops import StopMatcher

#: The last item of a job's queue.
END = object()


class Job:
    """One ``infer`` request as both sides see it: the decode thread puts stream items,
    ``flush`` sends them to ``loop``, the ``infer`` generator reads them from ``queue``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.cancelled = threading.Event()
        #: The tokens generated so far (read by tests and logs after the job ends).
        self.tokens: list[int] = []
        self._outbox: list[Any] = []

    def put(self, item: dict[str, Any]) -> None:
        self._outbox.append(item)

    def fail(self, error: FerruleError) -> None:
        self._outbox += [error, END]

    def end(self) -> None:
        self._outbox.append(END)

    def flush(self) -> None:
        """Send what was put since the last flush, in one call into the loop."""
        if not self._outbox:
            return
        items, self._outbox = self._outbox, []
        try:
            self.loop.call_soon_threadsafe(self._deliver, items)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self.cancelled.set()

    def _deliver(self, items: list[Any]) -> None:
        for item in items:
            self.queue.put_nowait(item)


class Sequence:
    """A request ready to decode: its prompt's tokens, its sampler chain and how its text
    is cut and parsed."""

    def __init__(
        self,
        job: Job,
        prompt: list[int],
        sampler: Sampler,
        *,
        limit: int,
        stops: StopMatcher,
        parser: StreamParser,
    ) -> None:
        self.job = job
        self.prompt = prompt
        #: Closed when the sequence ends (it holds a llama.cpp sampler chain).
        self.sampler = sampler
        self.limit = limit
        self.stops = stops
        self.parser = parser
        self.decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self.slot: Slot | None = None
        #: The token sampled last, to be decoded in the next step (None: reading the prompt).
        self.next_token: int | None = None


class Slot:
    """A sequence id of the context and the tokens its KV stream holds."""

    def __init__(self, seq_id: int) -> None:
        self.seq_id = seq_id
        self.cached: list[int] = []
        self.sequence: Sequence | None = None
