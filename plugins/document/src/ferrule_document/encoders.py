"""A document part in each provider dialect. The provider's `ContentPolicy` (types, size) was
checked before any of these runs.

Where a provider reads no file of the document's type (plain text on OpenAI, anything on a
compatible server or a local model), the document goes as its text, marked as a document
so the model can tell it from the question."""

from __future__ import annotations

from typing import Any

from ferrule_kit.content.policy import Encoding

from .part import PDF, DocumentPart


def as_text(part: DocumentPart, encoding: Encoding) -> str:
    """The document as text: ``<document name="...">`` and its text (a PDF's extracted)."""
    text = part.text()
    if not text:
        raise encoding.refuse(
            f"{encoding.policy.name} reads documents as text, and this PDF has no text layer "
            "(a scan?); send it to a provider that reads PDFs (OpenAI, Anthropic, Gemini)",
            "document",
        )
    name = f' name="{part.filename}"' if part.filename else ""
    return f"<document{name}>\n{text}\n</document>"


def openai(part: DocumentPart, encoding: Encoding) -> dict[str, Any]:
    """OpenAI: a PDF as a ``file`` part (OpenAI reads its text and its pages' images);
    plain text as a text part."""
    if part.mime_type == PDF:
        file = {"filename": part.filename or "document.pdf", "file_data": part.data_url}
        return {"type": "file", "file": file}
    return {"type": "text", "text": as_text(part, encoding)}


def compatible(part: DocumentPart, encoding: Encoding) -> dict[str, Any]:
    """An OpenAI-compatible server: the document's text, as a text part."""
    return {"type": "text", "text": as_text(part, encoding)}


def anthropic(part: DocumentPart, encoding: Encoding) -> dict[str, Any]:
    """An Anthropic ``document`` block: a PDF as base64, plain text as a text source."""
    if part.mime_type == PDF:
        source = {"type": "base64", "media_type": PDF, "data": part.data}
    else:
        source = {"type": "text", "media_type": part.mime_type, "data": part.text()}
    block: dict[str, Any] = {"type": "document", "source": source}
    if part.filename:
        block["title"] = part.filename
    return block


def gemini(part: DocumentPart, encoding: Encoding) -> dict[str, Any]:
    """A Gemini ``inlineData`` part (Gemini reads PDFs and plain text)."""
    return {"inlineData": {"mimeType": part.mime_type, "data": part.data}}
