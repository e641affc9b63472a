"""Describing a language-model component type, for a plugin's hook module.

A plugin's ``plugin.py`` is imported at every discovery, so it must stay cheap: these
descriptions name the contract's input class and the wire converter as strings, and the
kernel imports `ferrule.lm` only when a model is first defined or called.
"""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec, MethodSpec, Target

INFER_INPUT = "ferrule.lm:InferInput"
WIRE_CONVERTER = "ferrule.messages:converter"


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


def language_model_type(
    name: str,
    factory: Target,
    attributes: type | str,
    *,
    aliases: tuple[str, ...] = (),
    description: str = "",
    converter: object = WIRE_CONVERTER,
) -> ComponentTypeSpec:
    """Describe a language-model component type: ``infer`` plus the given attributes class
    (a class, or its ``"module:attr"`` to keep the hook module light)."""
    return ComponentTypeSpec(
        name=name,
        factory=factory,
        attributes=attributes,
        methods=(infer_method(),),
        aliases=aliases,
        description=description,
        converter=converter,
    )
