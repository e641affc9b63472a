"""`PIIDetectionGuardrail`: personal data in a run's input (or output), blocked or masked.

Agno's guardrail, with its names and settings, and checks that look past the pattern
where a checksum exists: a card number must pass the Luhn check and an IBAN the ISO 13616
mod-97 check, so an order number or a timestamp of the same shape is not taken for one.
Text is matched as `ferrule_guardrails.normalize` reads it (no format characters, NFKC), so
a zero-width space or a full-width ``＠`` does not hide a value, and masking replaces the
original characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs
from ferrule_kit.content.messages import Message, TextPart
from ferrule_kit.guardrails import (
    BaseGuardrail,
    CheckTrigger,
    InputCheckError,
    OutputCheckError,
    RunInput,
)

from .normalize import normalized

#: A finder: the (start, end) spans of what it finds in a text.
Finder = Callable[[str], Iterator[tuple[int, int]]]

_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
# international numbers (+ and 7 to 15 digits) and North American ones: (555) 123-4567
_PHONE = re.compile(
    r"(?<![\w+])\+\d{1,3}(?:[\s.-]?\d){6,14}\b"
    r"|(?<![\w+])(?:\(\d{3}\)\s?|\d{3}[\s.-]?)\d{3}[\s.-]?\d{4}\b"
)
# 13 to 19 digits, not after a "+" (a phone number's) or a decimal point: in groups
# separated by single spaces or dashes, or by dots in the groups cards print (4-4-4-4 to
# 4-4-4-7, 4-6-4, 4-6-5), since dots anywhere would take a decimal number for a card
_CARD = re.compile(
    r"(?<![\w+-])(?<!\d\.)"
    r"(?:\d(?:[ -]?\d){12,18}|\d{4}\.\d{4}\.\d{4}\.\d{4,7}|\d{4}\.\d{6}\.\d{4,5})"
    r"(?![\w-]|\.\d)"
)
# a country code, two check digits and 11 to 30 letters or digits, in groups of any size
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (ISO/IEC 7812 card numbers)."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """Whether ``text`` (spaces allowed) is an IBAN whose check digits are right (mod 97)."""
    compact = text.replace(" ", "")
    if not 15 <= len(compact) <= 34 or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(char, 36)) for char in rearranged)
    return int(number) % 97 == 1


def _cards(text: str) -> Iterator[tuple[int, int]]:
    for match in _CARD.finditer(text):
        digits = re.sub(r"[ .-]", "", match.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            yield match.span()


def _ibans(text: str) -> Iterator[tuple[int, int]]:
    for match in _IBAN.finditer(text):
        start, groups = match.start(), match.group().split(" ")
        # the pattern may take following words in capitals: drop those (letters only: a
        # BBAN ends with its account number's digits), and nothing else, since a
        # shortened number passes mod 97 one time in 97
        while groups:
            candidate = " ".join(groups)
            if iban_valid(candidate):
                yield start, start + len(candidate)
                break
            if not groups[-1].isalpha():
                break
            groups.pop()


def _pattern(pattern: re.Pattern[str]) -> Finder:
    def find(text: str) -> Iterator[tuple[int, int]]:
        return (match.span() for match in pattern.finditer(text))

    return find


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span (in order, not overlapping) replaced by as many asterisks
    (Agno's masking)."""
    pieces, last = [], 0
    for start, end in spans:
        pieces += [text[last:start], "*" * (end - start)]
        last = end
    return "".join(pieces) + text[last:] if pieces else text


class PIIDetectionGuardrail(BaseGuardrail):
    """Finds personal data in a run's input: social security numbers, card numbers
    (Luhn-checked), email addresses, phone numbers and IBANs (mod-97-checked), and any
    ``custom_patterns`` (a name to a regular expression).

    By default a run whose input holds any is stopped with `InputCheckError`
    (``check_trigger`` ``pii_detected``; ``details["detected_pii"]`` names the kinds
    found, never the values). With ``mask_pii=True`` each value is replaced by as many
    asterisks and the run goes on, so neither the model nor the db ever sees it. As a
    post-hook it checks the run's output the same way (`OutputCheckError`).
    """

    mask_pii: bool
    pii_finders: dict[str, Finder]
    pii_patterns: dict[str, re.Pattern[str]]

    def __init__(
        self,
        mask_pii: bool = False,
        enable_ssn_check: bool = True,
        enable_credit_card_check: bool = True,
        enable_email_check: bool = True,
        enable_phone_check: bool = True,
        enable_iban_check: bool = True,
        custom_patterns: Mapping[str, re.Pattern[str] | str] | None = None,
    ) -> None:
        self.mask_pii = mask_pii
        # cards and IBANs first: a masked number is no longer taken for a phone number
        checks: list[tuple[bool, str, Finder, re.Pattern[str]]] = [
            (enable_credit_card_check, "Credit Card", _cards, _CARD),
            (enable_iban_check, "IBAN", _ibans, _IBAN),
            (enable_ssn_check, "SSN", _pattern(_SSN), _SSN),
            (enable_email_check, "Email", _pattern(_EMAIL), _EMAIL),
            (enable_phone_check, "Phone", _pattern(_PHONE), _PHONE),
        ]
        self.pii_finders = {name: find for on, name, find, _ in checks if on}
        #: Each kind's pattern (Agno's ``pii_patterns``); cards and IBANs must also pass
        #: their checksum to count.
        self.pii_patterns = {name: pattern for on, name, _, pattern in checks if on}
        for name, given in (custom_patterns or {}).items():
            compiled = re.compile(given)
            self.pii_finders[name] = _pattern(compiled)
            self.pii_patterns[name] = compiled

    def __repr__(self) -> str:
        return f"PIIDetectionGuardrail(mask_pii={self.mask_pii}, checks={list(self.pii_finders)})"

    def detect(self, text: str) -> list[str]:
        """The kinds of personal data found in ``text``, in the order they are checked."""
        matched = normalized(text).text
        return [name for name, find in self.pii_finders.items() if next(find(matched), None)]

    def mask(self, text: str) -> str:
        """``text`` with every value found replaced by asterisks, one per character of the
        original (invisible ones inside a value included), so its length is kept."""
        matched = normalized(text)
        for find in self.pii_finders.values():
            spans = [
                matched.original_span(*span) for span in find(matched.text) if span[0] < span[1]
            ]
            if spans:  # the next finder reads the masked text
                text = _mask(text, spans)
                matched = normalized(text)
        return text

    def _masked(self, value: Any) -> Any:
        """``value`` (an input) with its text masked and the rest kept: the parts of a
        prompt (an image stays), messages, a list of them. Anything else becomes its masked
        text (a structured input reaches the model as JSON text anyway)."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, TextPart):
            return TextPart(self.mask(value.text))
        if isinstance(value, Message):
            return attrs.evolve(value, contents=[self._masked(p) for p in value.contents])
        if isinstance(value, list):
            return [self._masked(item) for item in value]
        if isinstance(value, dict) and "role" in value:
            return {**value, "content": self._masked(value.get("content", ""))}
        if isinstance(value, dict) and value.get("type") == "text":
            return {**value, "text": self.mask(str(value.get("text", "")))}
        if not isinstance(value, dict) and isinstance(getattr(value, "type", None), str):
            return value  # a media part: no text in it
        return self.mask(RunInput(value).input_content_string())

    def check(self, run_input: Any) -> None:
        is_input = isinstance(run_input, RunInput)
        if is_input:
            text = run_input.input_content_string()
        elif isinstance(getattr(run_input, "content", None), str):
            text = run_input.content
        else:  # structured output: nothing to scan as text
            return
        detected = self.detect(text)
        if not detected:
            return
        if self.mask_pii:
            if is_input:
                run_input.input_content = self._masked(run_input.input_content)
            else:
                run_input.content = self.mask(text)
            return
        error = InputCheckError if is_input else OutputCheckError
        where = "input" if is_input else "output"
        raise error(
            f"Potential PII detected in {where}: {', '.join(detected)}",
            check_trigger=CheckTrigger.PII_DETECTED,
            detected_pii=detected,
        )
