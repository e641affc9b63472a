"""ferrule-document's hook module: registers the document part type. Discovery imports this
module on every Runtime(), so it imports nothing more: the hook (called only when a part
other than text is first needed) imports the kit's `PartType`, and everything else is named
as a string."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kernel import hookimpl

if TYPE_CHECKING:
    from ferrule_kit.content.parts import PartType


@hookimpl
def ferrule_register_part_types() -> list[PartType]:
    from ferrule_kit.content.parts import (
        ANTHROPIC,
        GEMINI,
        OPENAI,
        OPENAI_COMPATIBLE,
        TEXT,
        PartType,
    )

    return [
        PartType(
            name="document",
            cls="ferrule_document.part:DocumentPart",
            wire_types=("file",),
            structure="ferrule_document.part:structure",
            unstructure="ferrule_document.part:unstructure",
            encoders={
                OPENAI: "ferrule_document.encoders:openai",
                OPENAI_COMPATIBLE: "ferrule_document.encoders:compatible",
                ANTHROPIC: "ferrule_document.encoders:anthropic",
                GEMINI: "ferrule_document.encoders:gemini",
                TEXT: "ferrule_document.encoders:as_text",
            },
            # A path in an agent's prompt or files=: the file, read as a document.
            adapters={"pathlib.PurePath": "ferrule_document.content:DocumentContent.from_path"},
            exports={
                "DocumentContent": "ferrule_document.content:DocumentContent",
                "DocumentPart": "ferrule_document.part:DocumentPart",
            },
        )
    ]
