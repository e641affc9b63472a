"""ferrule-audio's hook module: registers the audio part type. Discovery imports this module on
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
    from ferrule_kit.content.parts import GEMINI, OPENAI, OPENAI_COMPATIBLE, PartType

    chat_completions = "ferrule_audio.encoders:chat_completions"
    return [
        PartType(
            name="audio",
            cls="ferrule_audio.part:AudioPart",
            wire_types=("input_audio",),
            structure="ferrule_audio.part:structure",
            unstructure="ferrule_audio.part:unstructure",
            # Anthropic takes no audio, and a text-only model cannot hear it: no encoders.
            encoders={
                OPENAI: chat_completions,
                OPENAI_COMPATIBLE: chat_completions,
                GEMINI: "ferrule_audio.encoders:gemini",
            },
            exports={
                "AudioContent": "ferrule_audio.content:AudioContent",
                "AudioPart": "ferrule_audio.part:AudioPart",
            },
        )
    ]
