"""merge_state: a run's change to its session's state re-applied over another writer's."""

from __future__ import annotations

import copy
from typing import Any

from ferrule_kit.stores.statemerge import merge_state
from hypothesis import given
from hypothesis import strategies as st

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
_states = st.dictionaries(st.text(max_size=3), _values, max_size=4)


def test_appends_of_both_writers_are_kept_in_order() -> None:
    base = {"items": ["a"], "n": 1}
    mine = {"items": ["a", "m1", "m2"], "n": 1}
    theirs = {"items": ["a", "t1"], "n": 2}
    assert merge_state(base, mine, theirs) == {"items": ["a", "t1", "m1", "m2"], "n": 2}


def test_keys_changed_added_and_removed() -> None:
    base = {"keep": 1, "mine": 1, "gone": 1, "theirs": 1, "nested": {"x": 1, "y": 1}}
    mine = {"keep": 1, "mine": 2, "theirs": 1, "new": [1], "nested": {"x": 2, "y": 1}}
    theirs = {
        "keep": 1,
        "mine": 1,
        "gone": 1,
        "theirs": 3,
        "other": True,
        "nested": {"x": 1, "y": 5},
    }
    assert merge_state(base, mine, theirs) == {
        "keep": 1,
        "mine": 2,
        "theirs": 3,
        "other": True,
        "nested": {"x": 2, "y": 5},
        "new": [1],
    }


def test_a_removed_key_they_changed_is_kept() -> None:
    assert merge_state({"k": 1}, {}, {"k": 2}) == {"k": 2}


def test_a_list_both_created_gets_both_items() -> None:
    assert merge_state({}, {"items": ["m"]}, {"items": ["t"]}) == {"items": ["t", "m"]}


def test_a_value_of_another_type_is_not_confused_with_an_equal_one() -> None:
    assert merge_state({"k": 1}, {"k": True}, {"k": 1}) == {"k": True}


@given(base=_states, mine=_states)
def test_without_another_writer_the_result_is_mine(
    base: dict[str, Any], mine: dict[str, Any]
) -> None:
    assert merge_state(base, mine, copy.deepcopy(base)) == mine


@given(base=_states, theirs=_states)
def test_without_a_change_of_mine_the_result_is_theirs(
    base: dict[str, Any], theirs: dict[str, Any]
) -> None:
    assert merge_state(base, copy.deepcopy(base), theirs) == theirs


@given(base=_states, mine=_states, theirs=_states)
def test_no_input_is_modified(
    base: dict[str, Any], mine: dict[str, Any], theirs: dict[str, Any]
) -> None:
    copies = copy.deepcopy((base, mine, theirs))
    merge_state(base, mine, theirs)
    assert (base, mine, theirs) == copies
