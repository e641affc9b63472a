"""Registers `echo`, which returns ``{"text": ...}`` exactly as given."""

from __future__ import annotations

import attrs
from ferrule_kernel import OperatorSpec, hookimpl


@attrs.frozen
class EchoInput:
    """Text to echo back."""

    text: str


def echo(inputs: EchoInput) -> dict[str, str]:
    return {"text": inputs.text}


@hookimpl
def ferrule_register_operators() -> list[OperatorSpec]:
    # blocking=False: returning a dict never blocks, so async callers skip the thread hop.
    return [
        OperatorSpec(
            "echo", echo, EchoInput, blocking=False, description="Return the input text as given."
        )
    ]
