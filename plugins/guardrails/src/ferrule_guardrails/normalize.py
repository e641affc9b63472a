"""The text the guardrails match against, and the way back to the text they were given.

Look-alike and invisible characters would otherwise hide what a guardrail looks for:
``john＠example.com`` (a full-width at sign), ``4111\\u200b1111 1111 1111`` (a zero-width
space inside), an instruction written in Unicode tag characters (invisible, yet read by
some models). So text is matched after format characters (category Cf) are dropped, tag
characters are read as the ASCII they stand for, and NFKC folds compatibility forms
(full-width letters and digits, ligatures). Each character of the result remembers the
characters it came from, so what is found can be masked where it stands in the original.
"""

from __future__ import annotations

import unicodedata

import attrs

#: Unicode tag characters (U+E0020..U+E007E): invisible copies of printable ASCII.
_TAG_OFFSET = 0xE0000
_TAGS = range(_TAG_OFFSET + 0x20, _TAG_OFFSET + 0x7F)


@attrs.frozen
class NormalizedText:
    """``text`` as matched, with, for each of its characters, the ``(start, end)`` of the
    original characters it came from (``origins`` None: the original, unchanged)."""

    text: str
    origins: tuple[tuple[int, int], ...] | None = None

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that the non-empty span ``[start, end)`` of
        `text` came from (whole clusters: a match that ends inside a ligature covers it)."""
        if self.origins is None:
            return start, end
        return self.origins[start][0], self.origins[end - 1][1]


def normalized(text: str) -> NormalizedText:
    """``text`` with format characters dropped, tag characters read as ASCII and NFKC
    applied, one cluster (a starter and the combining marks after it) at a time."""
    if text.isascii():  # no format characters, and NFKC leaves ASCII as it is
        return NormalizedText(text)
    out: list[str] = []
    origins: list[tuple[int, int]] = []
    cluster: list[str] = []
    cluster_start = cluster_end = 0

    def flush() -> None:
        for char in unicodedata.normalize("NFKC", "".join(cluster)):
            out.append(char)
            origins.append((cluster_start, cluster_end))
        cluster.clear()

    for index, char in enumerate(text):
        code = ord(char)
        if code in _TAGS:
            flush()
            out.append(chr(code - _TAG_OFFSET))
            origins.append((index, index + 1))
        elif unicodedata.category(char) == "Cf":
            continue  # dropped; a span around it still covers it
        elif cluster and unicodedata.combining(char):
            cluster.append(char)
            cluster_end = index + 1
        else:
            flush()
            cluster.append(char)
            cluster_start, cluster_end = index, index + 1
    flush()
    return NormalizedText("".join(out), tuple(origins))
