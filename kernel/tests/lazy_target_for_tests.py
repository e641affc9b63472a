"""Imported by the kernel only when a lazily named operator is first called (tests check that)."""

import attrs
from ferrule_kernel import make_converter

converter = make_converter()


@attrs.frozen
class EchoInput:
    text: str


def echo(inputs):
    return {"text": inputs.text}
