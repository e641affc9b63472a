"""The image part: its class and its shape on ferrule's wire (OpenAI's ``image_url`` part)."""

from __future__ import annotations

import base64
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import check_fields, data_url, decoded_size, parse_data_url, required


@attrs.frozen
class ImagePart:
    """An image: a public URL, or base64 data with its MIME type (sent as a data URL)."""

    url: str | None = None
    data: str | None = None
    mime_type: str | None = None
    type: Literal["image"] = "image"

    def __attrs_post_init__(self) -> None:
        if (self.url is None) == (self.data is None):
            raise InvalidInputError(
                "an image needs exactly one of url or data", field="image_url.url"
            )

    @property
    def data_url(self) -> str:
        """The image as a URL: its public URL or a ``data:`` URL."""
        if self.url is not None:
            return self.url
        return data_url(self.mime_type, self.data or "")

    def to_bytes(self) -> bytes:
        if self.data is None:
            raise ValueError("this image is a URL; it has no inline bytes")
        return base64.b64decode(self.data)

    @property
    def size(self) -> int:
        """Bytes of inline data once decoded (0 for a URL), without decoding it."""
        return decoded_size(self.data or "")

    @property
    def media_format(self) -> str | None:
        """The MIME type, which providers' policies name."""
        return self.mime_type


_FIELDS = frozenset({"type", "image_url"})


def structure(data: dict[str, Any]) -> ImagePart:
    """``{"type": "image_url", "image_url": {"url": ...}}``: a public URL or a base64 data
    URL. Other keys of ``image_url`` (OpenAI's ``detail``) are accepted and not kept."""
    check_fields(data, _FIELDS)
    image = required(data, "image_url", dict, "image_url")
    url = required(image, "url", str, "image_url.url")
    if url.startswith("data:"):
        mime_type, payload = parse_data_url(url, "image_url.url")
        return ImagePart(data=payload, mime_type=mime_type)
    return ImagePart(url=url)


def unstructure(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": part.data_url}}
