"""`ControlTextGuard`: a request's control texts come back out of any rendering as plain-text
segments, the template's own as special ones, and everything else is untouched."""

from __future__ import annotations

import json

from ferrule_kit.content.messages import converter
from ferrule_kit.models.control_text import ControlTextGuard, Segment
from ferrule_kit.models.lm import InferInput
from hypothesis import given
from hypothesis import strategies as st

CONTROL = ["<|im_start|>", "<|im_end|>", "<|im_start|>x", "<s>"]
GUARD = ControlTextGuard(CONTROL)


def render(request: InferInput) -> str:
    """A ChatML-like template: markers around each message, the tools as JSON (escaped
    as Jinja's tojson escapes, to show markers survive it)."""
    out = []
    for message in request.messages:
        out.append(f"<|im_start|>{message.role}\n{message.text}<|im_end|>\n")
    for tool in request.tools:
        out.append(json.dumps({"description": tool.function.description}).replace("<", "\\u003c"))
    return "".join(out) + "<|im_start|>assistant\n"


def request(text: str, description: str = "d") -> InferInput:
    tool = {"type": "function", "function": {"name": "f", "description": description}}
    return converter.structure(
        {"messages": [{"role": "user", "content": text}], "tools": [tool], "stop": ["<|im_end|>"]},
        InferInput,
    )


pieces = st.lists(st.sampled_from([*CONTROL, "a", "<", "|", "im_start", " ", "é"]), max_size=12)


@given(pieces)
def test_the_users_control_texts_come_back_as_text_segments(parts: list[str]) -> None:
    text = "".join(parts)
    escaped, escapes = GUARD.escape(request(text))
    segments = GUARD.segments(render(escaped), escapes)
    original = render(request(text))
    # Joined, the segments are the prompt the request renders to, character for character.
    assert "".join(s.text for s in segments) == original
    # The template's text holds exactly the template's markers: 2 starts, 1 end.
    special = "".join(s.text for s in segments if s.special)
    assert special.count("<|im_start|>") == 2 and special.count("<|im_end|>") == 1
    # The user's are text segments, each one control text.
    assert all(s.text in CONTROL for s in segments if not s.special)
    if not any(c in text for c in CONTROL):
        assert escapes is None and segments == [Segment(original, True)]


def test_stop_strings_and_unchanged_parts_are_left_alone() -> None:
    original = request("plain", description="<s> opens")
    escaped, escapes = GUARD.escape(original)
    assert escapes is not None
    assert escaped.stop == ["<|im_end|>"]
    assert escaped.messages is original.messages  # nothing to change there: the same objects
    assert "<s>" not in escaped.tools[0].function.description
    # A marker in tojson-escaped JSON still splits out the user's text.
    segments = GUARD.segments(render(escaped), escapes)
    assert Segment("<s>", False) in segments


def test_longer_control_texts_win_over_their_prefixes() -> None:
    escaped, escapes = GUARD.escape(request("<|im_start|>xy"))
    segments = GUARD.segments(render(escaped), escapes)
    assert Segment("<|im_start|>x", False) in segments


def test_each_request_gets_its_own_marker() -> None:
    a = GUARD.escape(request("<s>"))[1]
    b = GUARD.escape(request("<s>"))[1]
    assert a is not None and b is not None and a.marker != b.marker


def test_a_tokenizer_without_control_texts_changes_nothing() -> None:
    original = request("<|im_start|>")
    assert ControlTextGuard([]).escape(original) == (original, None)
