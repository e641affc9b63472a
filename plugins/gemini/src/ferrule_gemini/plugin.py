"""Registers `gemini_language_model` and answers which model ids it serves. Imports
nothing heavy: the component lives in `ferrule_gemini.model`, imported when one is
defined."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import ComponentTypeSpec, hookimpl
from ferrule_kit.models.lmspec import ProviderModels, language_model_type

from .embedspec import EMBEDDER_TYPE, embedder_types

COMPONENT_TYPE = "gemini_language_model"
#: Gemini's Interactions API (`ferrule_gemini.interactions_model`), reached by naming its
#: provider: the same model ids as generateContent's.
INTERACTIONS_TYPE = "gemini_interactions_language_model"
INTERACTIONS_PROVIDERS = frozenset({"gemini-interactions"})
PROVIDERS = frozenset({"gemini", "google"})
MODEL_PREFIX = "gemini-"
#: Embedding model ids served by `gemini_embedder` with no provider named (with or
#: without ``models/``): gemini-embedding-001, text-embedding-004, embedding-001, ...
EMBEDDING_MODEL_PREFIXES = ("gemini-embedding-", "text-embedding-0", "embedding-0")
API_KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
#: Ids with or without ``models/``, as Google's SDK takes them.
MODELS = ProviderModels(
    COMPONENT_TYPE, PROVIDERS, prefixes=(MODEL_PREFIX,), ignored_prefix="models/"
)
INTERACTIONS_MODELS = ProviderModels(
    INTERACTIONS_TYPE, INTERACTIONS_PROVIDERS, ignored_prefix="models/"
)
EMBEDDING_MODELS = ProviderModels(
    EMBEDDER_TYPE, PROVIDERS, prefixes=EMBEDDING_MODEL_PREFIXES, ignored_prefix="models/"
)


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    model = language_model_type(
        COMPONENT_TYPE,
        "ferrule_gemini.model:create",
        "ferrule_gemini.attributes:GeminiAttributes",
        description="Google Gemini models through the Gemini API (streamed).",
    )
    interactions = language_model_type(
        INTERACTIONS_TYPE,
        "ferrule_gemini.interactions_model:create",
        "ferrule_gemini.interactions_attributes:GeminiInteractionsAttributes",
        description="Google Gemini models and agents through the Interactions API.",
    )
    return [
        model,
        interactions,
        *embedder_types(),
    ]


@hookimpl
def ferrule_resolve_api_model(model_id: str, provider: str | None) -> Any:
    return MODELS.route(model_id, provider) or INTERACTIONS_MODELS.route(model_id, provider)


@hookimpl
def ferrule_resolve_embedder(model_id: str, provider: str | None) -> Any:
    return EMBEDDING_MODELS.route(model_id, provider)
