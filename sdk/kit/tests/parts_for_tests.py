"""A part type for the kit's own tests: a colour swatch, registered in-process (the kit
depends on no content plugin). Its text form makes it readable by text-only models too."""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import ANTHROPIC, OPENAI, TEXT, PartType, check_fields, required
from ferrule_kit.content.policy import Encoding

_HEX = re.compile(r"^#[0-9a-f]{6}$")


@attrs.frozen
class ColorPart:
    hex: str
    type: Literal["color"] = "color"

    def __attrs_post_init__(self) -> None:
        if not _HEX.match(self.hex):
            raise InvalidInputError(f"not a colour like #ff8800: {self.hex!r}", field="color.hex")

    @property
    def media_format(self) -> str:
        return "rgb"


def structure(data: dict[str, Any]) -> ColorPart:
    check_fields(data, {"type", "color"})
    return ColorPart(required(required(data, "color", dict, "color"), "hex", str, "color.hex"))


def unstructure(part: ColorPart) -> dict[str, Any]:
    return {"type": "color", "color": {"hex": part.hex}}


def as_text(part: ColorPart, encoding: Encoding) -> str:
    return f"[colour {part.hex}]"


def chat(part: ColorPart, encoding: Encoding) -> dict[str, Any]:
    return {"type": "text", "text": as_text(part, encoding)}


COLOR = PartType(
    name="color",
    cls=ColorPart,
    wire_types=("color",),
    structure=structure,
    unstructure=unstructure,
    encoders={OPENAI: chat, ANTHROPIC: chat, TEXT: as_text},
    exports={"ColorPart": ColorPart},
)


@attrs.frozen
class StickerPart:
    """A part with no text form: text-only models refuse it."""

    id: str
    type: Literal["sticker"] = "sticker"


STICKER = PartType(
    name="sticker",
    cls=StickerPart,
    wire_types=("sticker",),
    structure=lambda data: StickerPart(required(data, "id", str, "id")),
    unstructure=lambda part: {"type": "sticker", "id": part.id},
    encoders={OPENAI: lambda part, encoding: {"type": "sticker", "id": part.id}},
)
