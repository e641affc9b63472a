"""Describes `openai_embedder` for the plugin's hook (`ferrule_openai.plugin`). Cheap to
import: the component and its attributes load from `ferrule_openai.embeddings` when one
is defined."""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec
from ferrule_kit.embeddings.embedspec import embedder_type

EMBEDDER_TYPE = "openai_embedder"


def embedder_types() -> list[ComponentTypeSpec]:
    return [
        embedder_type(
            EMBEDDER_TYPE,
            "ferrule_openai.embeddings:create",
            "ferrule_openai.embeddings:OpenAIEmbedderAttributes",
            aliases=("openai_compatible_embedder",),
            blocking=False,
            tokens=True,
            description="OpenAI's embeddings API (POST /embeddings), or any OpenAI-compatible "
            "embeddings endpoint through base_url.",
        )
    ]
