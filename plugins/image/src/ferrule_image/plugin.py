"""ferrule-image's hook module: registers the image part type. Discovery imports this module on
every Runtime(), so it imports nothing more: the hook (called only when a part other than
text is first needed) imports the kit's `PartType`, and everything else is named as a
string."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kernel import hookimpl

if TYPE_CHECKING:
    from ferrule_kit.content.parts import PartType


@hookimpl
def ferrule_register_part_types() -> list[PartType]:
    from ferrule_kit.content.parts import ANTHROPIC, GEMINI, OPENAI, OPENAI_COMPATIBLE, PartType

    chat_completions = "ferrule_image.encoders:chat_completions"
    return [
        PartType(
            name="image",
            cls="ferrule_image.part:ImagePart",
            wire_types=("image_url",),
            structure="ferrule_image.part:structure",
            unstructure="ferrule_image.part:unstructure",
            encoders={
                OPENAI: chat_completions,
                OPENAI_COMPATIBLE: chat_completions,
                ANTHROPIC: "ferrule_image.encoders:anthropic",
                GEMINI: "ferrule_image.encoders:gemini",
            },
            # A Pillow image (any subclass: PngImageFile, ...) in an agent's prompt.
            adapters={"PIL.Image.Image": "ferrule_image.content:ImageContent.from_pillow"},
            exports={
                "ImageContent": "ferrule_image.content:ImageContent",
                "ImagePart": "ferrule_image.part:ImagePart",
            },
        )
    ]
