"""Hypothesis strategies the provider plugins' property tests share: what a model may stream
(`texts`, `json_values`, `tool_calls`) and where a stream may be cut (`cut`).

A provider's property test builds a turn from these, encodes it in its wire format, cuts
the bytes or the arguments anywhere, and checks that its translation folds back to the
turn::

    from ferrule_kit.testing.strategies import cut, texts, tool_calls

    @given(text=st.lists(texts, max_size=4), calls=tool_calls, cuts=st.lists(st.integers()))
    def test_any_stream_folds_back(text, calls, cuts): ...
"""

from __future__ import annotations

import itertools
from typing import Any, TypeVar

from hypothesis import strategies as st

__all__ = ["cut", "json_values", "texts", "tool_calls"]

#: A text fragment a model streams: one character or more (Hypothesis' text has no lone
#: surrogate, which no JSON encoder sends).
texts = st.text(min_size=1, max_size=12)
#: Any JSON value, nested a little: what a tool's arguments hold.
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
#: Up to three tool calls, each ``(name, arguments)``: a name of lower-case letters and
#: underscores, arguments a JSON object.
tool_calls: st.SearchStrategy[list[tuple[str, dict[str, Any]]]] = st.lists(
    st.tuples(
        st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
        st.dictionaries(st.text(max_size=6), json_values, max_size=3),
    ),
    max_size=3,
)

Cuttable = TypeVar("Cuttable", str, bytes)


def cut(data: Cuttable, points: list[int]) -> list[Cuttable]:
    """``data`` cut at ``points`` (each taken modulo its length plus one, so any integers
    do), in order, no piece empty; together the pieces are ``data``."""
    bounds = sorted({point % (len(data) + 1) for point in points} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]
