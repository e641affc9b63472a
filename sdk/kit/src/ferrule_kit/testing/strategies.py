"""Hypothesis strategies the provider plugins' property tests share: what a model may stream
(`texts`, `json_values`, `tool_calls`) and where a stream may be cut (`cut`).

A provider's property test builds a turn from these, encodes it in its wire format, cuts
the bytes or the arguments anywhere, and checks that its translation folds back to the
turn::

    from ferrule_kit.testing.strategies import cut, texts, tool_calls

    @given(text=st.lists(texts, max_size=4), calls=tool_calls, cuts=st.lists(st.integers()))
    def test_any_stream_folds_back(text, calls, cuts): ...

`plugin_profile` gives a plugin's property tests Hypothesis settings of their own, chosen
by ``HYPOTHESIS_PROFILE`` (nox sets ``ci``), without touching other packages' settings in
the same run.
"""

from __future__ import annotations

import itertools
import os
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = ["cut", "json_values", "plugin_profile", "texts", "tool_calls"]

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


def plugin_profile(name: str, *, ci: int, dev: int) -> settings:
    """Hypothesis settings for the property tests of the plugin ``name`` (a decorator):
    ``ci`` examples each when ``HYPOTHESIS_PROFILE`` is ``ci``, else ``dev``; no deadline
    (a loaded CI machine is slow, not wrong). Registered as ``{name}-ci`` and
    ``{name}-dev`` and applied per test, never loaded as the global profile, so other
    packages' tests in the same run keep their settings."""
    settings.register_profile(
        f"{name}-ci",
        max_examples=ci,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(f"{name}-dev", max_examples=dev, deadline=None)
    chosen = "ci" if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else "dev"
    return settings(settings.get_profile(f"{name}-{chosen}"))
