"""StopMatcher: the same result however the text is split into pieces."""

from __future__ import annotations

import itertools

from ferrule_llamacpp.stops import StopMatcher
from hypothesis import given
from hypothesis import strategies as st

alphabet = st.sampled_from("ab<|>x\n")


def expected(text: str, stops: list[str]) -> tuple[str, bool]:
    hits = [text.find(s) for s in stops if s and s in text]
    return (text[: min(hits)], True) if hits else (text, False)


@given(
    text=st.text(alphabet, max_size=40),
    stops=st.lists(st.text(alphabet, max_size=5), max_size=3),
    cuts=st.lists(st.integers(0, 40), max_size=10),
)
def test_any_split_gives_the_text_before_the_first_stop(
    text: str, stops: list[str], cuts: list[int]
) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    matcher = StopMatcher(stops)
    out = "".join(matcher.feed(text[a:b]) for a, b in itertools.pairwise(bounds))
    if not matcher.stopped:
        out += matcher.flush()
    assert (out, matcher.stopped) == expected(text, stops)


def test_a_partial_stop_is_held_back_until_it_is_decided() -> None:
    matcher = StopMatcher(["<|im_end|>"])
    assert matcher.feed("Hello <|im") == "Hello "
    assert matcher.feed("_en") == ""
    assert matcher.feed("d|> ignored") == ""
    assert matcher.stopped


def test_a_false_start_is_released() -> None:
    matcher = StopMatcher(["STOP"])
    assert matcher.feed("ST") == ""
    assert matcher.feed("ay") == "STay"
    assert matcher.flush() == ""
