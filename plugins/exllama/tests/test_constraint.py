"""JSON-schema constraint: `SchemaConstraint` over lm-format-enforcer's real parser and
token enforcer, on a small character vocabulary built here (exllamav2's tokenizer and
filter interface need torch and a GPU; the backend only adapts this class to them)."""

from __future__ import annotations

import json
import string

import pytest
from ferrule_exllama.constraint import SchemaConstraint, schema_parser
from ferrule_kernel import InvalidInputError
from hypothesis import given, settings
from hypothesis import strategies as st
from lmformatenforcer import TokenEnforcerTokenizerData

CHARS = list(string.printable)
#: A few multi-character tokens, as real vocabularies have.
WORDS = ['{"', '":', ' "', '",', '"}', "true", "false"]
PIECES = CHARS + WORDS
EOS = len(PIECES)


def tokenizer_data() -> TokenEnforcerTokenizerData:
    regular = [(i, piece, piece.startswith(" ")) for i, piece in enumerate(PIECES)]
    return TokenEnforcerTokenizerData(
        regular, lambda ids: "".join(PIECES[i] for i in ids if i < EOS), EOS, False, EOS + 1
    )


DATA = tokenizer_data()

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "celsius": {"type": "integer"},
        "sunny": {"type": "boolean"},
    },
    "required": ["city", "celsius", "sunny"],
}


def drive(constraint: SchemaConstraint, text: str) -> list[int]:
    """Feed ``text`` one character token at a time, checking each is allowed; return what may follow."""
    constraint.begin()
    for char in text:
        token = CHARS.index(char)
        assert token in constraint.allowed(), (text, char)
        constraint.feed(token)
    return constraint.allowed()


def test_a_reply_following_the_schema_is_allowed_to_its_end():
    constraint = SchemaConstraint(DATA, WEATHER)
    after = drive(constraint, '{"city": "Oslo", "celsius": 4, "sunny": false}')
    assert EOS in after  # the value is complete: the reply may end


def test_what_breaks_the_schema_is_not_allowed():
    constraint = SchemaConstraint(DATA, WEATHER)
    assert CHARS.index("[") not in drive(constraint, "")  # an object, not an array
    allowed = drive(constraint, '{"city": "Oslo", "celsius": ')
    assert CHARS.index('"') not in allowed  # an integer, not a string
    assert CHARS.index("4") in allowed
    assert EOS not in drive(constraint, '{"city": "Oslo"')  # required fields still missing


@settings(max_examples=25, deadline=None)
@given(
    city=st.text(alphabet=string.ascii_letters + " ", min_size=1, max_size=8),
    celsius=st.integers(-50, 50),
    sunny=st.booleans(),
)
def test_any_instance_of_the_schema_can_be_generated(city, celsius, sunny):
    text = json.dumps({"city": city, "celsius": celsius, "sunny": sunny})
    assert EOS in drive(SchemaConstraint(DATA, WEATHER), text)


def test_begin_starts_a_new_reply():
    constraint = SchemaConstraint(DATA, WEATHER)
    drive(constraint, '{"city"')
    constraint.begin()
    assert set(constraint.allowed()) == set(drive(SchemaConstraint(DATA, WEATHER), ""))


@pytest.mark.parametrize("schema", [{"type": 5}, {"type": "frob"}, {"$ref": "#/nowhere"}])
def test_a_schema_it_cannot_follow_is_bad_input_naming_the_field(schema):
    with pytest.raises(InvalidInputError) as info:
        schema_parser(schema)
    assert info.value.errors[0]["path"] == "$.output_schema"
