"""`text_limit`, the one length validator plugins put on their attrs inputs' text fields
(a calculator's expression, a search query, a command)."""

from __future__ import annotations

import attrs
import pytest
from ferrule_kernel import InvalidInputError, structure_input, text_limit


@attrs.frozen
class Search:
    query: str = attrs.field(validator=text_limit(5, empty=False))
    note: str | None = attrs.field(default=None, validator=text_limit(3))


def errors(data: dict) -> list[dict[str, str]]:
    with pytest.raises(InvalidInputError) as info:
        structure_input(data, Search, target="test")
    return info.value.errors


def test_text_up_to_the_limit_and_none_pass():
    assert structure_input({"query": "abcde", "note": None}, Search, target="t").query == "abcde"
    assert structure_input({"query": " x ", "note": ""}, Search, target="t").note == ""


@pytest.mark.parametrize(
    ("data", "path", "message"),
    [
        ({"query": "abcdef"}, "$.query", "query is 6 characters long; the limit is 5"),
        ({"query": " \t\n"}, "$.query", "query must not be empty"),
        ({"query": ""}, "$.query", "query must not be empty"),
        ({"query": "a", "note": "abcd"}, "$.note", "note is 4 characters long; the limit is 3"),
    ],
)
def test_a_refusal_names_the_field_and_the_limit(data, path, message):
    assert errors(data) == [{"path": path, "message": message}]
