"""`PromptInjectionGuardrail`: its phrases are found whatever the case, spacing and
invisible characters around them; inputs without them pass."""

from __future__ import annotations

import pytest
from ferrule_guardrails import (
    DEFAULT_INJECTION_PATTERNS,
    CheckTrigger,
    InputCheckError,
    PromptInjectionGuardrail,
)
from ferrule_kit.guardrails import RunInput
from hypothesis import given
from hypothesis import strategies as st

BENIGN = [
    "What is the capital of France?",
    "Summarise this article about Roman roads in three sentences.",
    "Please translate 'good morning' into German.",
    "How do I reverse a list in Python?",
]


@st.composite
def disguised(draw: st.DrawFn) -> tuple[str, str]:
    """A default pattern in random case, with random white space and zero-width
    characters between its words, inside other text."""
    pattern = draw(st.sampled_from(DEFAULT_INJECTION_PATTERNS))
    words = []
    for word in pattern.split(" "):
        cased = "".join(c.upper() if draw(st.booleans()) else c for c in word)
        words.append(cased)
    gaps = st.sampled_from([" ", "  ", "\n", "\t ", " \u200b", "\u00a0"])
    text = words[0] + "".join(draw(gaps) + w for w in words[1:])
    before = draw(st.sampled_from(["", "Hello. ", "Now "]))
    after = draw(st.sampled_from(["", " please", ". Thanks!"]))
    return before + text + after, pattern


@given(disguised())
def test_every_default_pattern_is_found_however_it_is_written(case):
    text, pattern = case
    guard = PromptInjectionGuardrail()
    with pytest.raises(InputCheckError) as caught:
        guard.check(RunInput(text))
    assert caught.value.check_trigger is CheckTrigger.PROMPT_INJECTION
    assert pattern in caught.value.details["patterns"]


@pytest.mark.parametrize("text", BENIGN)
def test_ordinary_questions_pass(text):
    PromptInjectionGuardrail().check(RunInput(text))


def test_full_width_letters_are_folded():
    assert PromptInjectionGuardrail().detect("ＪＡＩＬＢＲＥＡＫ now") == ["jailbreak"]


def test_custom_patterns_replace_the_default_set():
    guard = PromptInjectionGuardrail(injection_patterns=["Open the pod bay doors"])
    assert guard.detect("hal, OPEN the pod  bay doors") == ["open the pod bay doors"]
    assert guard.detect("ignore previous instructions") == []


@pytest.mark.parametrize(
    "text",
    [
        "ign\u200eore previous instructions",  # a left-to-right mark
        "jail\u2063break",  # an invisible separator
        "JAIL\u180eBREAK now",  # the Mongolian vowel separator
        "ignore previous\u202e instructions",  # a right-to-left override
        # the phrase in Unicode tag characters: invisible on screen, read by some models
        "hello " + "".join(chr(0xE0000 + ord(c)) for c in "jailbreak"),
    ],
)
def test_format_characters_and_tag_characters_do_not_hide_a_pattern(text):
    assert PromptInjectionGuardrail().detect(text)
