"""ferrule_kit.models.lmspec.ProviderModels: which model ids a provider plugin serves, the data
each provider's ``ferrule_resolve_api_model`` / ``ferrule_resolve_embedder`` answers from."""

from __future__ import annotations

from ferrule_kit.models.lmspec import ModelRoute, ProviderModels

GROK = ProviderModels(
    "xai_language_model", frozenset({"xai", "grok"}), prefixes=("grok-",), ids={"beta-1"}
)
GEMINI = ProviderModels(
    "gemini_language_model", {"gemini"}, prefixes=("gemini-",), ignored_prefix="models/"
)
NAMED_ONLY = ProviderModels("openai_responses_language_model", ("openai-responses",))


def test_an_id_of_its_prefixes_or_list_is_claimed_with_no_provider_named():
    assert GROK.route("grok-4", None) == ModelRoute("xai_language_model", {"model": "grok-4"})
    assert GROK.route("beta-1", None) == ModelRoute("xai_language_model", {"model": "beta-1"})
    assert GROK.route("gpt-4o", None) is None  # another plugin's


def test_a_provider_of_its_names_routes_any_id_in_any_case_and_another_provider_none():
    assert GROK.route("my-finetune", "Grok") == ModelRoute(
        "xai_language_model", {"model": "my-finetune"}
    )
    assert GROK.route("grok-4", "openai") is None


def test_the_ignored_prefix_is_taken_off_for_the_claim_and_kept_in_the_id():
    assert GEMINI.route("models/gemini-2.5-flash", None) == ModelRoute(
        "gemini_language_model", {"model": "models/gemini-2.5-flash"}
    )
    assert GEMINI.route("models/other", None) is None


def test_with_no_prefixes_or_ids_only_its_provider_name_reaches_it():
    assert NAMED_ONLY.route("gpt-4.1", None) is None
    assert NAMED_ONLY.route("gpt-4.1", "openai-responses") is not None
