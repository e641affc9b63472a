"""An image part in each provider dialect. The provider's `ContentPolicy` (types, size, URL
or inline) was checked before any of these runs."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import InvalidInputError
from ferrule_kit.content.policy import Encoding

from .part import ImagePart


def chat_completions(part: ImagePart, encoding: Encoding) -> dict[str, Any]:
    """OpenAI and compatible servers: an ``image_url`` part (a public URL or a data URL)."""
    if part.url is not None and not part.url.startswith(("http://", "https://")):
        raise InvalidInputError("an image URL must be http(s) or a data URL", field=encoding.field)
    return {"type": "image_url", "image_url": {"url": part.data_url}}


def anthropic(part: ImagePart, encoding: Encoding) -> dict[str, Any]:
    """An Anthropic ``image`` block, its source base64 data (or a URL)."""
    if part.url is not None:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": part.mime_type, "data": part.data},
    }


def gemini(part: ImagePart, encoding: Encoding) -> dict[str, Any]:
    """A Gemini ``inlineData`` part; Gemini fetches no public URL."""
    if part.url is not None:
        raise encoding.refuse(
            f"{encoding.policy.name} takes images as base64 data only, not by URL", "image_url"
        )
    return {"inlineData": {"mimeType": part.mime_type, "data": part.data}}
