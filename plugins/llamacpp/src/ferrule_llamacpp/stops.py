"""Stop strings over a stream of text pieces."""

from __future__ import annotations

from collections.abc import Sequence


class StopMatcher:
    """Cuts a streamed text at the first occurrence of any stop string.

    Text that could be the start of a stop string is held back until the next piece
    shows whether it is one, so nothing of a stop string is ever emitted, however the
    text is split: the pieces `feed` returns, followed by `flush`, always join to the
    text before the first stop (or all of it).
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self._stops = sorted({s for s in stops if s}, key=len)
        self._held = ""
        #: True once a stop string was seen; everything after it is dropped.
        self.stopped = False

    def feed(self, text: str) -> str:
        """The part of ``text`` (with what was held back) that is safe to emit now."""
        if self.stopped:
            return ""
        if not self._stops:
            return text
        data = self._held + text
        first = min((i for s in self._stops if (i := data.find(s)) >= 0), default=-1)
        if first >= 0:
            self._held = ""
            self.stopped = True
            return data[:first]
        keep = 0
        for stop in self._stops:
            for size in range(min(len(stop) - 1, len(data)), keep, -1):
                if data.endswith(stop[:size]):
                    keep = size
                    break
        self._held = data[len(data) - keep :]
        return data[: len(data) - keep]

    def flush(self) -> str:
        """At the end of the stream: what was held back (it did not become a stop)."""
        held, self._held = self._held, ""
        return held
