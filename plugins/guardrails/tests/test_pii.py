"""`PIIDetectionGuardrail`: what it finds, what it leaves, how it masks, as properties over
generated card numbers, IBANs, email addresses and phone numbers in arbitrary text."""

from __future__ import annotations

import re
import string

import pytest
from ferrule_guardrails import (
    CheckTrigger,
    InputCheckError,
    OutputCheckError,
    PIIDetectionGuardrail,
    iban_valid,
    luhn_valid,
)
from ferrule_kit.guardrails import RunInput
from hypothesis import assume, example, given
from hypothesis import strategies as st

# -- generators ------------------------------------------------------------------------------


def luhn_digit(body: str) -> str:
    """The digit that makes ``body`` + it pass the Luhn check."""
    for digit in string.digits:
        if luhn_valid(body + digit):
            return digit
    raise AssertionError("some digit always completes a Luhn number")


@st.composite
def card_numbers(draw: st.DrawFn, valid: bool = True) -> str:
    length = draw(st.integers(13, 19))
    body = draw(st.text(string.digits, min_size=length - 1, max_size=length - 1))
    body = draw(st.sampled_from("3456")) + body[1:]
    check = luhn_digit(body)
    if not valid:
        check = str((int(check) + draw(st.integers(1, 9))) % 10)
    digits = body + check
    separator = draw(st.sampled_from(["", " ", "-"]))
    groups = [digits[i : i + 4] for i in range(0, len(digits), 4)]
    return separator.join(groups)


@st.composite
def ibans(draw: st.DrawFn, valid: bool = True) -> str:
    country = draw(st.text(string.ascii_uppercase, min_size=2, max_size=2))
    # a BBAN ends with its account number's digits (what lets a capitalised word that
    # follows be told apart from the number)
    bban = draw(st.text(string.digits + string.ascii_uppercase, min_size=10, max_size=29))
    bban += draw(st.sampled_from(string.digits))
    number = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    check = 98 - number % 97
    if not valid:
        check = (check + draw(st.integers(1, 96))) % 97 + 2  # another pair: always wrong
        assume(not iban_valid(f"{country}{check:02d}{bban}"))
    compact = f"{country}{check:02d}{bban}"
    if draw(st.booleans()):  # the printed form: groups of four
        return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    return compact


emails = st.builds(
    "{}@{}.{}".format,
    st.text(string.ascii_lowercase + string.digits + "._", min_size=1, max_size=12).filter(
        lambda s: s[0].isalnum()
    ),
    st.text(string.ascii_lowercase, min_size=1, max_size=10),
    st.sampled_from(["com", "org", "io", "de", "museum"]),
)
phones = st.one_of(
    st.builds(
        "+{} {} {}".format,
        st.integers(1, 99),
        st.integers(100, 9999),
        st.integers(100000, 9999999),
    ),
    st.builds(
        "({}) {}-{}".format, st.integers(200, 999), st.integers(200, 999), st.integers(1000, 9999)
    ),
    st.builds(
        "{}-{}-{}".format, st.integers(200, 999), st.integers(200, 999), st.integers(1000, 9999)
    ),
)
#: Text around the value: words with no digits, '@' or capitals (nothing PII-shaped).
words = st.lists(st.text(string.ascii_lowercase, min_size=1, max_size=8), max_size=6).map(" ".join)


def around(value: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str]]:
    return st.tuples(words, value, words).map(lambda t: (f"{t[0]} {t[1]} {t[2]}".strip(), t[1]))


# -- properties ------------------------------------------------------------------------------


def found_and_masked(text: str, pii: str, kind: str) -> str:
    """``text`` masked by a default guardrail, which finds ``kind`` in it: as long as the
    text, and ``pii`` no longer in it."""
    guard = PIIDetectionGuardrail()
    assert kind in guard.detect(text)
    masked = guard.mask(text)
    assert len(masked) == len(text) and pii not in masked
    return masked


@given(around(card_numbers()))
@example(("pay with 4111 1111 1111 1111 now", "4111 1111 1111 1111"))
def test_a_luhn_valid_card_number_is_found_and_masked(case):
    assert not re.search(r"\d", found_and_masked(*case, "Credit Card"))


@given(around(card_numbers(valid=False)))
def test_a_number_failing_the_luhn_check_is_no_card(case):
    text, _ = case
    guard = PIIDetectionGuardrail(enable_phone_check=False, enable_iban_check=False)
    assert guard.detect(text) == []


@given(around(ibans()))
@example(("iban DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00"))
@example(("GB82WEST12345698765432", "GB82WEST12345698765432"))
def test_a_valid_iban_is_found_and_masked(case):
    found_and_masked(*case, "IBAN")


@given(around(ibans(valid=False)))
def test_an_iban_with_wrong_check_digits_is_not_one(case):
    text, _ = case
    guard = PIIDetectionGuardrail(
        enable_credit_card_check=False, enable_phone_check=False, enable_ssn_check=False
    )
    assert "IBAN" not in guard.detect(text)


@pytest.mark.parametrize(
    ("kind", "found", "left_out"),
    [("Email", around(emails), "@"), ("Phone", around(phones), r"\d")],
    ids=["email", "phone"],
)
@given(data=st.data())
def test_an_email_address_or_phone_number_is_found_and_masked(kind, found, left_out, data):
    # Alone in its text: it is all the guardrail finds, and its mask leaves none of it.
    text, _ = data.draw(found)
    guard = PIIDetectionGuardrail()
    assert guard.detect(text) == [kind]
    assert not re.search(left_out, guard.mask(text))


@given(words)
def test_plain_words_are_left_alone(text):
    guard = PIIDetectionGuardrail(mask_pii=True)
    assert guard.detect(text) == []
    run_input = RunInput(text)
    guard.check(run_input)
    assert run_input.input_content == text


@given(st.text(max_size=200))
def test_masking_keeps_the_length_and_is_idempotent(text):
    guard = PIIDetectionGuardrail()
    once = guard.mask(text)
    assert len(once) == len(text)
    assert guard.mask(once) == once
    assert guard.detect(once) == []


# -- as a hook -------------------------------------------------------------------------------


def test_blocking_names_the_kinds_never_the_values():
    guard = PIIDetectionGuardrail()
    text = "card 4111-1111-1111-1111, ssn 123-45-6789, a@b.io"
    with pytest.raises(InputCheckError) as caught:
        guard.check(RunInput(text))
    error = caught.value
    assert error.check_trigger is CheckTrigger.PII_DETECTED
    assert error.details["detected_pii"] == ["Credit Card", "SSN", "Email"]
    shown = repr(error.to_dict()) + str(error)
    for secret in ("4111", "123-45", "a@b.io"):
        assert secret not in shown


def test_disabled_checks_and_custom_patterns():
    guard = PIIDetectionGuardrail(
        enable_email_check=False, custom_patterns={"Employee id": r"\bEMP-\d{6}\b"}
    )
    assert guard.detect("write to a@b.io about EMP-123456") == ["Employee id"]
    assert guard.mask("EMP-123456") == "**********"


class Output:  # what a post-hook gets: an object with the content
    def __init__(self, content: object) -> None:
        self.content = content


def test_as_a_post_hook_it_checks_or_masks_the_output():
    with pytest.raises(OutputCheckError):
        PIIDetectionGuardrail().check(Output("reach me at a@b.io"))
    output = Output("reach me at a@b.io")
    PIIDetectionGuardrail(mask_pii=True).check(output)
    assert output.content == "reach me at ******"
    PIIDetectionGuardrail().check(Output({"structured": "a@b.io"}))  # not text: left alone


def test_masking_keeps_the_structure_of_the_input():
    from ferrule_kit.content.messages import Message, TextPart

    class Image:  # a media part: kept as it is
        type = "image"

    image = Image()
    guard = PIIDetectionGuardrail(mask_pii=True)
    run_input = RunInput(["mail a@b.io", TextPart("or c@d.io"), image])
    guard.check(run_input)
    assert run_input.input_content == ["mail ******", TextPart("or ******"), image]
    messages = RunInput([Message("user", "a@b.io"), {"role": "user", "content": "c@d.io"}])
    guard.check(messages)
    first, second = messages.input_content
    assert (first.text, second["content"]) == ("******", "******")
    structured = RunInput({"type": "order", "email": "a@b.io"})
    guard.check(structured)  # a structured input becomes its masked JSON text
    assert structured.input_content == '{"type": "order", "email": "******"}'


# -- look-alike and invisible characters -------------------------------------------------------

#: Format characters (category Cf) a value may hide behind: zero-width space, joiners,
#: word joiner, soft hyphen, left-to-right mark, byte order mark.
INVISIBLE = "\u200b\u200c\u200d\u2060\u00ad\u200e\ufeff"


def full_width(text: str) -> str:
    """``text`` with its printable ASCII written as the full-width forms (U+FF01..)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@st.composite
def disguised(draw: st.DrawFn, value: str) -> str:
    """``value`` with format characters slipped in between its characters, and perhaps
    written full width."""
    if draw(st.booleans()):
        value = full_width(value)
    gaps = st.lists(st.sampled_from(INVISIBLE), max_size=2).map("".join)
    return value[0] + "".join(draw(gaps) + char for char in value[1:])


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("pay with 4111.1111.1111.1111 now", "Credit Card"),
        ("amex 3782.822463.10005.", "Credit Card"),
        ("card 4111\u200b1111\u200b1111\u200b1111", "Credit Card"),
        ("card 4111 1111\u2060 1111 1111", "Credit Card"),
        ("write to john\u200b@example.com", "Email"),
        ("write to jo\u200dhn@exa\u00admple.com", "Email"),
        ("write to john＠example.com", "Email"),
        ("write to ｊｏｈｎ＠ｅｘａｍｐｌｅ．ｃｏｍ", "Email"),
        ("card ４１１１ １１１１ １１１１ １１１１", "Credit Card"),
    ],
)
def test_dots_look_alikes_and_invisible_characters_do_not_hide_a_value(text, kind):
    guard = PIIDetectionGuardrail()
    assert guard.detect(text) == [kind]
    masked = guard.mask(text)
    assert len(masked) == len(text)
    assert masked.split(" ")[0] == text.split(" ")[0]  # the words before it are kept
    assert not re.search(r"[\d@＠]", masked)
    assert guard.detect(masked) == []


@given(st.one_of(card_numbers(), emails).flatmap(lambda v: st.tuples(disguised(v), st.just(v))))
def test_a_disguised_value_is_found_and_masked_where_it_stands(case):
    text, value = case
    guard = PIIDetectionGuardrail(enable_phone_check=False, enable_iban_check=False)
    sentence = f"here: {text} thanks"
    assert guard.detect(sentence) == ["Email" if "@" in value else "Credit Card"]
    masked = guard.mask(sentence)
    # the value's characters, invisible ones included, are asterisks; the rest is kept
    assert masked == "here: " + "*" * len(text) + " thanks"


@pytest.mark.parametrize(
    "text",
    ["pi is 3.1415926535897932", "version 4111.1111.1111", "1.4111111111111111 m", "a 4111.1111"],
)
def test_decimal_numbers_and_short_dotted_groups_are_no_cards(text):
    assert "Credit Card" not in PIIDetectionGuardrail().detect(text)
