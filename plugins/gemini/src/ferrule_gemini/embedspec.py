"""Describes `gemini_embedder` for the plugin's hook (`ferrule_gemini.plugin`). Cheap to
import: the component and its attributes load from `ferrule_gemini.embeddings` when one
is defined."""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec
from ferrule_kit.embeddings.embedspec import embedder_type

EMBEDDER_TYPE = "gemini_embedder"


def embedder_types() -> list[ComponentTypeSpec]:
    return [
        embedder_type(
            EMBEDDER_TYPE,
            "ferrule_gemini.embeddings:create",
            "ferrule_gemini.embeddings:GeminiEmbedderAttributes",
            blocking=False,
            description="Google's Gemini embeddings API (batchEmbedContents), with the "
            "retrieval task types for documents and queries.",
        )
    ]
