"""Describing a language-model component type, for a plugin's hook module.

A plugin's ``plugin.py`` is imported at every discovery, so it must stay cheap: these
descriptions name the contract's input class and the wire converter as strings, and the
kernel imports `ferrule_kit.models.lm` only when a model is first defined or called.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

import attrs
from ferrule_kernel import ComponentTypeSpec, InvalidInputError, MethodSpec, Target

#: The model used when none is named: it runs on any machine, offline.
DEFAULT_LOCAL_MODEL = "SmolLM2-135M-Instruct"

#: Local model ids standing for others, ``id=other`` pairs separated by commas:
#: ``Qwen/Qwen3-0.6B=SmolLM2-135M-Instruct,Qwen/Qwen3-8B=SmolLM2-135M-Instruct`` runs a
#: script written for Qwen3 unchanged on a machine that has only the offline default.
MODEL_ALIASES_VARIABLE = "FERRULE_MODEL_ALIASES"


def model_aliases() -> dict[str, str]:
    """The aliases ``$FERRULE_MODEL_ALIASES`` sets (read on each call: a process may set
    it after import). A malformed entry raises `InvalidInputError` naming the variable."""
    aliases: dict[str, str] = {}
    for entry in os.environ.get(MODEL_ALIASES_VARIABLE, "").split(","):
        if not entry.strip():
            continue
        name, equals, target = (s.strip() for s in entry.partition("="))
        if not equals or not name or not target:
            raise InvalidInputError(
                f"{MODEL_ALIASES_VARIABLE} holds {entry.strip()!r}; each entry is "
                "'model-id=other-model-id', entries separated by commas",
                field=MODEL_ALIASES_VARIABLE,
            )
        aliases[name] = target
    return aliases


def resolve_model_alias(model_id: str) -> str:
    """The model ``model_id`` stands for under `MODEL_ALIASES_VARIABLE` (following an alias
    of an alias), else ``model_id`` itself. `ferrule.LocalModel` and the local backends
    apply it to the id they are given; a loop raises `InvalidInputError`."""
    aliases = model_aliases()
    seen = [model_id]
    while model_id in aliases:
        model_id = aliases[model_id]
        if model_id in seen:
            raise InvalidInputError(
                f"{MODEL_ALIASES_VARIABLE} maps {' -> '.join([*seen, model_id])}: a loop",
                field=MODEL_ALIASES_VARIABLE,
            )
        seen.append(model_id)
    return model_id


@attrs.frozen
class ModelRoute:
    """Which component type serves a model, and the attributes to define it with: what
    the ``ferrule_resolve_*_model`` hooks return."""

    component_type: str
    attributes: dict[str, Any] = attrs.field(factory=dict, repr=False)


def api_model_route(
    component_type: str,
    model_id: str,
    provider: str | None,
    *,
    providers: Collection[str],
    claimed: bool,
) -> ModelRoute | None:
    """What a provider plugin's ``ferrule_resolve_api_model`` answers: its component type
    for ``model_id`` when ``provider`` is one of its ``providers`` (any case), or, with no
    provider named, when the plugin ``claimed`` the id (a prefix of its own, an id of its
    list); else None, leaving the id to another plugin."""
    if provider is None:
        if not claimed:
            return None
    elif provider.lower() not in providers:
        return None
    return ModelRoute(component_type, {"model": model_id})


@attrs.frozen
class ProviderModels:
    """The model ids a provider plugin serves, as data: its ``component_type``, the
    ``providers`` names that route any id to it, and, with no provider named, the ids it
    claims: those of ``ids`` and those starting with one of ``prefixes``, once
    ``ignored_prefix`` is taken off (Gemini's ``models/``). A hook module answers
    ``ferrule_resolve_api_model`` (or ``ferrule_resolve_embedder``) with `route`."""

    component_type: str
    providers: Collection[str]
    prefixes: tuple[str, ...] = ()
    ids: Collection[str] = frozenset()
    ignored_prefix: str = ""

    def claims(self, model_id: str) -> bool:
        """Whether the plugin serves ``model_id`` when no provider is named."""
        bare = model_id.removeprefix(self.ignored_prefix) if self.ignored_prefix else model_id
        return bare in self.ids or bare.startswith(self.prefixes)

    def route(self, model_id: str, provider: str | None) -> ModelRoute | None:
        """`api_model_route` for these ids."""
        return api_model_route(
            self.component_type,
            model_id,
            provider,
            providers=self.providers,
            claimed=self.claims(model_id),
        )


INFER_INPUT = "ferrule_kit.models.lm:InferInput"
TOKEN_COUNT = "ferrule_kit.models.lm:TokenCount"
WIRE_CONVERTER = "ferrule_kit.content.messages:converter"


def infer_method(description: str = "Generate a reply, streamed as message deltas.") -> MethodSpec:
    """The ``infer`` method every language-model component type declares."""
    return MethodSpec(
        "infer",
        INFER_INPUT,
        streaming=True,
        blocking=False,
        description=description,
        converter=WIRE_CONVERTER,
    )


def count_tokens_method(
    description: str = "The input tokens an infer of the same input would read, without "
    "generating: {input_tokens}.",
) -> MethodSpec:
    """The optional ``count_tokens`` method: ``infer``'s input, one `ferrule_kit.models.lm.TokenCount`
    back (see `language_model_type`'s ``counts_tokens``)."""
    return MethodSpec(
        "count_tokens",
        INFER_INPUT,
        blocking=False,
        description=description,
        converter=WIRE_CONVERTER,
        outputs=TOKEN_COUNT,
    )


def language_model_type(
    name: str,
    factory: Target,
    attributes: type | str,
    *,
    aliases: tuple[str, ...] = (),
    description: str = "",
    converter: object = WIRE_CONVERTER,
    counts_tokens: bool = False,
) -> ComponentTypeSpec:
    """Describe a language-model component type: ``infer`` plus the given attributes class
    (a class, or its ``"module:attr"`` to keep the hook module light). ``counts_tokens``:
    its instances also have ``count_tokens`` (`count_tokens_method`), exact and free of
    generation; without it, callers that need a count run ``infer`` for one token."""
    methods = (infer_method(), count_tokens_method()) if counts_tokens else (infer_method(),)
    return ComponentTypeSpec(
        name=name,
        factory=factory,
        attributes=attributes,
        methods=methods,
        aliases=aliases,
        description=description,
        converter=converter,
    )
