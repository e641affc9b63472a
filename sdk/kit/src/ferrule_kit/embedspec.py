"""Describing an embedder component type, for a plugin's hook module (`embedder_type`).

Like `ferrule_kit.lmspec` and `ferrule_kit.vectorspec`, this stays cheap to import: the
methods name the contract's input classes (`ferrule_kit.embedding`) as strings, imported
when an embedder is first defined. `EmbedderUnavailableError` lives here so that its kind
is known to every process that discovered an embedder plugin (a client reading it off the
wire included); `ferrule_kit.embedding` re-exports both.
"""

from __future__ import annotations

from ferrule_kernel import (
    ComponentTypeSpec,
    FerruleError,
    MethodSpec,
    Target,
    register_error_kind,
)

__all__ = [
    "EMBED_INPUT",
    "EMBED_TOKENS_INPUT",
    "INFO_INPUT",
    "EmbedderUnavailableError",
    "ailoy_embedding_model_type",
    "embedder_type",
]


@register_error_kind
class EmbedderUnavailableError(FerruleError):
    """An embedder that cannot serve: its weights or runtime are missing or broken.
    ``details`` carry ``embedder`` (its component type) and ``reason``. (API embedders
    report an unreachable provider with `ferrule_kit.errors.ProviderConnectionError`.)"""

    kind = "embedder_unavailable"


EMBED_INPUT = "ferrule_kit.embedding:EmbedInput"
INFO_INPUT = "ferrule_kit.embedding:InfoInput"
EMBED_TOKENS_INPUT = "ferrule_kit.embedding:EmbedTokensInput"


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


#: Ailoy 0.1's name of its embedding-model component type.
AILOY_EMBEDDING_MODEL = "tvm_embedding_model"


def ailoy_embedding_model_type(factory: Target, *, description: str = "") -> ComponentTypeSpec:
    """Describe Ailoy 0.1's ``tvm_embedding_model`` for an embedder plugin: Ailoy's
    attributes (`ferrule_kit.ailoy_embedding.AiloyEmbeddingAttributes`, given to
    ``factory``), its ``infer`` (``{prompt}`` -> ``{embedding}``) beside the contract's
    ``embed`` and ``info``. The embedder class mixes in
    `ferrule_kit.ailoy_embedding.AiloyEmbedderMethods`; ``factory`` checks the model with
    `ferrule_kit.ailoy_embedding.check_model`."""
    contract = embedder_type(AILOY_EMBEDDING_MODEL, factory, "")
    infer = MethodSpec(
        "infer",
        "ferrule_kit.ailoy_embedding:PromptInput",
        description="Ailoy 0.1: the vector of one text, {prompt} -> {embedding}.",
    )
    return ComponentTypeSpec(
        name=AILOY_EMBEDDING_MODEL,
        factory=factory,
        attributes="ferrule_kit.ailoy_embedding:AiloyEmbeddingAttributes",
        methods=(*contract.methods, infer),
        description=description,
    )
