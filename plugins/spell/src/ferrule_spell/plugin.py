"""Registers `spell`, which streams its text one character per item."""

from __future__ import annotations

from collections.abc import Iterator

import attrs
from ferrule_kernel import OperatorSpec, hookimpl


@attrs.frozen
class SpellInput:
    """Text to stream one character at a time."""

    text: str


def spell(inputs: SpellInput) -> Iterator[dict[str, str]]:
    for char in inputs.text:
        yield {"text": char}


@hookimpl
def ferrule_register_operators() -> list[OperatorSpec]:
    return [
        OperatorSpec(
            "spell",
            spell,
            SpellInput,
            streaming=True,
            blocking=False,
            description="Stream the input text one character per item.",
        )
    ]
