"""ferrule-document: the document part type (PDF and plain text), and `DocumentContent`,
which builds `DocumentPart`s from files, bytes or text, checking the type (sniffed from
the bytes) and the size first.

    from ferrule import DocumentContent      # or: from ferrule_document import DocumentContent
    DocumentContent.from_path("report.pdf")
    DocumentContent.from_bytes(data, filename="notes.txt")
    DocumentContent.from_text("Minutes of the meeting...", filename="minutes.txt")
    agent.query("Summarise this.", files=["report.pdf"])

The plugin (`ferrule_document.plugin`) registers the part type ``document`` (wire type
``file``, OpenAI's shape) with its encoders (`ferrule_document.encoders`): OpenAI ``file``
parts, Anthropic ``document`` blocks, Gemini inline data, and the document's text (a
PDF's extracted by pypdf) for OpenAI-compatible servers and local models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kit.content.parts import lazy_attributes

if TYPE_CHECKING:
    from .content import MAX_DOCUMENT_BYTES, DocumentContent, sniff_document_mime
    from .part import MIME_TYPES, DocumentPart

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MIME_TYPES",
    "DocumentContent",
    "DocumentPart",
    "sniff_document_mime",
]

# Discovery imports this package on every Runtime() (for ferrule_document.plugin): the public
# names are imported when first used.
__getattr__ = lazy_attributes(
    __name__,
    {
        "DocumentContent": ".content",
        "DocumentPart": ".part",
        "MAX_DOCUMENT_BYTES": ".content",
        "MIME_TYPES": ".part",
        "sniff_document_mime": ".content",
    },
)
