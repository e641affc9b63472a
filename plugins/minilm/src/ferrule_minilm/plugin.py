"""Registers `minilm_embedder` (alias `local_embedder`). Imports nothing heavy: numpy,
the tokenizer and the weights load when a component is defined (`ferrule_minilm.embedder`)."""

from __future__ import annotations

import attrs
from ferrule_kernel import ComponentTypeSpec, hookimpl, in_range
from ferrule_kit.embeddings.embedspec import embedder_type
from ferrule_kit.models.lmspec import ModelRoute

COMPONENT_TYPE = "minilm_embedder"
#: The ids (any case) `ferrule_resolve_embedder` answers for, and the providers it is.
MODEL_IDS = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})
PROVIDERS = frozenset({"minilm", "local"})


@attrs.frozen
class MiniLMAttributes:
    """What ``define`` takes: nothing is required."""

    #: Texts per forward pass, at most: a pass is padded to its longest text, and a few
    #: texts of a few hundred tokens already make products large enough for BLAS.
    batch_size: int = attrs.field(default=32, validator=in_range(1, 1024))
    #: Forward passes run at once, each on one thread (None: one per core this process
    #: may use). `ferrule_minilm.embedder` says why not BLAS's own threads.
    threads: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(in_range(1, 64))
    )
    #: The vectors' dimension: 384 (the model's), or more with zeros after the model's
    #: 384, so that MiniLM can stand in for a wider model (``BAAI/bge-m3``, 1024, by an
    #: alias: `ferrule_kit.embeddings.embedspec.aliased_dimension`) in a store sized for it. The zeros
    #: change no cosine, inner product or distance.
    dimension: int = attrs.field(default=384, validator=in_range(384, 65536))
    #: Check each weights file's SHA-256 against the published one (`ferrule_minilm.
    #: checksums`) before loading it: a damaged file is then refused with
    #: `EmbedderUnavailableError` naming it, not loaded. Off by default (the build checked
    #: the files; hashing them costs a read of 90 MB); Ailoy's ``EmbeddingModel.new_local``
    #: turns it on unless told ``validate_checksum=False``, as Ailoy does.
    validate_checksum: bool = attrs.field(
        default=False, validator=attrs.validators.instance_of(bool)
    )
    #: Text put before every text embedded (sentence-transformers' ``prompt``; Agno's
    #: ``SentenceTransformerEmbedder(prompt=...)``).
    prompt: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(str))
    )


@hookimpl
def ferrule_register_component_types() -> list[ComponentTypeSpec]:
    return [
        embedder_type(
            COMPONENT_TYPE,
            "ferrule_minilm.embedder:create",
            MiniLMAttributes,
            aliases=("local_embedder",),
            description="all-MiniLM-L6-v2 (384 dimensions, cosine), offline on numpy, "
            "with its weights in the package.",
        ),
    ]


@hookimpl
def ferrule_resolve_embedder(model_id: str, provider: str | None) -> ModelRoute | None:
    if provider is not None and provider.lower() not in PROVIDERS:
        return None
    if model_id.lower() not in MODEL_IDS:
        return None  # the one model this plugin runs, whoever asks
    return ModelRoute(COMPONENT_TYPE)
