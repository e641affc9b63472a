"""Describing an embedder component type, for a plugin's hook module (`embedder_type`).

Like `ferrule_kit.models.lmspec` and `ferrule_kit.embeddings.vectorspec`, this stays cheap to import: the
methods name the contract's input classes (`ferrule_kit.embeddings.embedding`) as strings, imported
when an embedder is first defined. `EmbedderUnavailableError` lives here so that its kind
is known to every process that discovered an embedder plugin (a client reading it off the
wire included); `ferrule_kit.embeddings.embedding` re-exports both.
"""

from __future__ import annotations

from ferrule_kernel import (
    ComponentTypeSpec,
    FerruleError,
    MethodSpec,
    Target,
    register_error_kind,
)

from ferrule_kit.models.lmspec import resolve_model_alias

__all__ = [
    "EMBED_INPUT",
    "EMBED_TOKENS_INPUT",
    "INFO_INPUT",
    "MODEL_DIMENSIONS",
    "EmbedderUnavailableError",
    "aliased_dimension",
    "embedder_type",
]


@register_error_kind
class EmbedderUnavailableError(FerruleError):
    """An embedder that cannot serve: its weights or runtime are missing or broken.
    ``details`` carry ``embedder`` (its component type) and ``reason``. (API embedders
    report an unreachable provider with `ferrule_kit.errors.ProviderConnectionError`.)"""

    kind = "embedder_unavailable"


EMBED_INPUT = "ferrule_kit.embeddings.embedding:EmbedInput"
INFO_INPUT = "ferrule_kit.embeddings.embedding:InfoInput"
EMBED_TOKENS_INPUT = "ferrule_kit.embeddings.embedding:EmbedTokensInput"


def embedder_type(
    name: str,
    factory: Target,
    attributes: type | str,
    *,
    aliases: tuple[str, ...] = (),
    description: str = "",
    blocking: bool = True,
    tokens: bool = False,
) -> ComponentTypeSpec:
    """Describe an embedder component type: ``embed`` and ``info`` plus the given attributes
    class (a class, or its ``"module:attr"``, keeping the hook module light).

    ``blocking``: True for an embedder that computes in the calling thread (a local
    model: the kernel runs it off the event loop); False for ``async def`` methods.
    ``tokens``: the type also has ``embed_tokens``, which embeds arrays of token ids of its
    model's own tokenizer (``{"tokens": [[9906, 1917]]}``, what OpenAI's API takes), with
    ``embed``'s output.
    """
    methods = [
        MethodSpec(
            "embed",
            EMBED_INPUT,
            blocking=blocking,
            description="Embed texts (documents to store, or a query) into vectors.",
        ),
        MethodSpec(
            "info",
            INFO_INPUT,
            blocking=False,
            description="The model, its dimension and batch limits, without embedding.",
        ),
    ]
    if tokens:
        methods.append(
            MethodSpec(
                "embed_tokens",
                EMBED_TOKENS_INPUT,
                blocking=blocking,
                description="Embed arrays of token ids of the model's tokenizer into vectors.",
            )
        )
    return ComponentTypeSpec(
        name=name,
        factory=factory,
        attributes=attributes,
        methods=tuple(methods),
        aliases=aliases,
        description=description,
    )


#: The width of embedding models that code may name without running them (their id is
#: aliased to a model this machine has): what `aliased_dimension` answers.
MODEL_DIMENSIONS = {"BAAI/bge-m3": 1024}


def aliased_dimension(model_id: str) -> int | None:
    """The width ``model_id``'s own model has (`MODEL_DIMENSIONS`) when
    ``$FERRULE_MODEL_ALIASES`` runs the id on another model: code written for the id sizes
    its stores so, and the stand-in is asked for vectors that wide (zeros after its own
    values, which change no cosine, inner product or distance). None when the id is not
    aliased or its width is not known: the model's own width holds."""
    if model_id in MODEL_DIMENSIONS and resolve_model_alias(model_id) != model_id:
        return MODEL_DIMENSIONS[model_id]
    return None
