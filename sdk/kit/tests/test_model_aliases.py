"""``$FERRULE_MODEL_ALIASES``: local model ids standing for others."""

from __future__ import annotations

import pytest
from ferrule_kernel import InvalidInputError
from ferrule_kit.models.lmspec import MODEL_ALIASES_VARIABLE, model_aliases, resolve_model_alias
from hypothesis import given
from hypothesis import strategies as st


def test_unset_means_no_aliases(monkeypatch):
    monkeypatch.delenv(MODEL_ALIASES_VARIABLE, raising=False)
    assert model_aliases() == {}
    assert resolve_model_alias("Qwen/Qwen3-0.6B") == "Qwen/Qwen3-0.6B"


def test_pairs_separated_by_commas_with_spaces_allowed(monkeypatch):
    monkeypatch.setenv(
        MODEL_ALIASES_VARIABLE,
        " Qwen/Qwen3-0.6B = SmolLM2-135M-Instruct ,Qwen/Qwen3-8B=owner/repo:Q4_K_M,",
    )
    assert resolve_model_alias("Qwen/Qwen3-0.6B") == "SmolLM2-135M-Instruct"
    assert resolve_model_alias("Qwen/Qwen3-8B") == "owner/repo:Q4_K_M"
    assert resolve_model_alias("Qwen/Qwen3-4B") == "Qwen/Qwen3-4B"


def test_an_alias_of_an_alias_is_followed_and_a_loop_is_refused(monkeypatch):
    monkeypatch.setenv(MODEL_ALIASES_VARIABLE, "a=b,b=c")
    assert resolve_model_alias("a") == "c"
    monkeypatch.setenv(MODEL_ALIASES_VARIABLE, "a=b,b=a")
    with pytest.raises(InvalidInputError, match="a -> b -> a") as info:
        resolve_model_alias("a")
    assert info.value.errors[0]["path"] == MODEL_ALIASES_VARIABLE


@pytest.mark.parametrize("entry", ["Qwen/Qwen3-0.6B", "=SmolLM2", "Qwen/Qwen3-0.6B="])
def test_a_malformed_entry_names_the_variable_and_the_entry(monkeypatch, entry):
    monkeypatch.setenv(MODEL_ALIASES_VARIABLE, f"a=b,{entry}")
    with pytest.raises(InvalidInputError) as info:
        model_aliases()
    assert info.value.errors[0]["path"] == MODEL_ALIASES_VARIABLE
    assert repr(entry) in info.value.message


_ids = st.text(
    st.characters(blacklist_characters="=,", blacklist_categories=("Z", "C")), min_size=1
)


@given(st.dictionaries(_ids, _ids, max_size=5))
def test_any_map_of_ids_round_trips_through_the_variable(aliases):
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv(MODEL_ALIASES_VARIABLE, ",".join(f"{k}={v}" for k, v in aliases.items()))
        assert model_aliases() == aliases
