"""`structure_input` checks a flat class (fields of JSON scalars, ``Any``, or one of them or
None) itself, so a cold start never imports cattrs; the strict converter still does every
other class. For any flat class and any input, both give the same instance, or the same
`InvalidInputError` (message, and every error's path and message, in order)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import attrs
import pytest
from ferrule_kernel import InvalidInputError, in_range, structure_input
from ferrule_kernel.validation import _flat, default_converter
from hypothesis import given, settings
from hypothesis import strategies as st

FIELD_TYPES: list[Any] = [str, int, float, bool, Any, str | None, int | None, float | None]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=2) | st.dictionaries(st.text(max_size=3), children, max_size=2)
    ),
    max_leaves=5,
)
names = st.sampled_from(["a", "b", "text", "count", "n_ctx", "x1"])


@st.composite
def flat_classes(draw: st.DrawFn) -> type:
    chosen = draw(st.lists(names, min_size=0, max_size=4, unique=True))
    fields: dict[str, Any] = {}
    defaulted = False
    for name in chosen:
        tp = draw(st.sampled_from(FIELD_TYPES))
        # attrs wants defaulted fields after the required ones
        defaulted = defaulted or draw(st.booleans())
        if defaulted:
            fields[name] = attrs.field(type=tp, default=None)
        else:
            fields[name] = attrs.field(type=tp)
    return attrs.make_class("Flat", fields)


def outcome(data: Any, cls: type, conv: Any) -> Any:
    try:
        return ("ok", structure_input(data, cls, target="t", conv=conv))
    except InvalidInputError as exc:
        return ("error", exc.message, exc.errors)


@settings(max_examples=400, deadline=None)
@given(
    cls=flat_classes(), data=st.dictionaries(names | st.text(max_size=3), json_values, max_size=5)
)
def test_flat_classes_structure_as_the_converter_does(cls, data):
    assert _flat(cls) is not None
    assert outcome(data, cls, None) == outcome(data, cls, default_converter())


@attrs.define
class Ranged:
    count: int = attrs.field(validator=in_range(0, 10))
    note: str | None = None


@attrs.define
class NotFlat:
    tags: list[str]
    mode: str = "a"


@pytest.mark.parametrize(
    "data",
    [
        {"count": 3},
        {"count": 30},
        {"count": -1, "note": "x"},
        {"count": "3"},
        {},
        {"count": 1, "odd key": 2},
    ],
)
def test_validators_and_odd_keys_are_reported_alike(data):
    assert _flat(Ranged) is not None
    assert outcome(data, Ranged, None) == outcome(data, Ranged, default_converter())


def test_other_classes_go_to_the_converter():
    assert _flat(NotFlat) is None
    assert outcome({"tags": ["x"], "mode": "b"}, NotFlat, None) == ("ok", NotFlat(["x"], "b"))
    assert outcome({"tags": "x"}, NotFlat, None)[2] == [
        {"path": "$.tags", "message": "expected array, got string"}
    ]


def test_a_flat_request_never_imports_cattrs():
    code = (
        "import sys\n"
        "import attrs\n"
        "from ferrule_kernel import structure_input, InvalidInputError\n"
        "@attrs.define\n"
        "class Echo:\n"
        "    text: str\n"
        "assert structure_input({'text': 'x'}, Echo, target='t') == Echo('x')\n"
        "try:\n"
        "    structure_input({'text': 1, 'x': 2}, Echo, target='t')\n"
        "except InvalidInputError as exc:\n"
        "    print(exc.message)\n"
        "print('cattrs' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "invalid input for t: $.text: expected string, got integer; $.x: unknown field",
        "False",
    ]
