"""`ImageContent`: image parts from a public URL, bytes, a file or a Pillow image."""

from __future__ import annotations

import base64
import os
from typing import Any

from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import media_bytes, read_media_file

from .part import ImagePart

__all__ = ["MAX_IMAGE_BYTES", "MIME_TYPES", "ImageContent", "sniff_image_mime"]

#: The largest image any provider ferrule supports accepts (OpenAI: 20 MiB).
MAX_IMAGE_BYTES = 20 * 1024 * 1024

#: The image types providers accept, by MIME type.
MIME_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif", "image/heic", "image/heif")

# Pillow format names for the types above (what ``Image.save(format=...)`` takes).
_PILLOW_FORMATS = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "WEBP": "image/webp",
    "GIF": "image/gif",
}


def sniff_image_mime(data: bytes) -> str | None:
    """The image type the bytes say they are (magic numbers), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[4:8] == b"ftyp":
        brand = data[8:12]
        if brand in (b"heic", b"heix", b"heim", b"heis"):
            return "image/heic"
        if brand in (b"mif1", b"msf1", b"heif"):
            return "image/heif"
    if data.startswith(b"BM"):
        return "image/bmp"
    if data.startswith((b"II*\x00", b"MM\x00*")):
        return "image/tiff"
    return None


def _is_pillow_image(value: Any) -> bool:
    return type(value).__module__.startswith("PIL.") and hasattr(value, "save")


class ImageContent:
    """Builds image parts; see the module docstring."""

    @staticmethod
    def from_url(url: str) -> ImagePart:
        """An image at a public ``http(s)`` URL (the provider fetches it; not every provider can)."""
        from urllib.parse import urlsplit

        if not isinstance(url, str):
            raise InvalidInputError(f"expected a URL string, got {type(url).__name__}", field="url")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InvalidInputError(
                f"not a public http(s) URL: {url[:100]!r}; use from_path or from_bytes for local images",
                field="url",
            )
        return ImagePart(url=url)

    @staticmethod
    def from_bytes(
        data: bytes, mime_type: str | None = None, *, max_bytes: int = MAX_IMAGE_BYTES
    ) -> ImagePart:
        """Image bytes; the type is sniffed from them (a given ``mime_type`` must agree)."""
        data = media_bytes(data, "the image", max_bytes)
        sniffed = sniff_image_mime(data)
        if sniffed is None:
            raise InvalidInputError(
                "unrecognised image format; use PNG, JPEG, WEBP or GIF", field="data"
            )
        if sniffed not in MIME_TYPES:
            raise InvalidInputError(
                f"{sniffed} images are not accepted by any provider; convert to PNG or JPEG "
                "(e.g. ImageContent.from_pillow(image))",
                field="data",
            )
        if mime_type is not None and mime_type.lower() != sniffed:
            raise InvalidInputError(
                f"mime_type says {mime_type} but the bytes are {sniffed}", field="mime_type"
            )
        return ImagePart(data=base64.b64encode(data).decode("ascii"), mime_type=sniffed)

    @staticmethod
    def from_path(path: str | os.PathLike[str], *, max_bytes: int = MAX_IMAGE_BYTES) -> ImagePart:
        """An image file; its type comes from its bytes, not its name."""
        data = read_media_file(path, max_bytes)
        return ImageContent.from_bytes(data, max_bytes=max_bytes)

    @staticmethod
    def from_pillow(
        image: Any, format: str | None = None, *, max_bytes: int = MAX_IMAGE_BYTES
    ) -> ImagePart:
        """A Pillow image, saved as its own format when providers take it, else PNG
        (``format`` forces one: ``"PNG"``, ``"JPEG"``, ``"WEBP"``, ``"GIF"``)."""
        import io

        if not _is_pillow_image(image):
            raise InvalidInputError(
                f"expected a Pillow image, got {type(image).__name__}", field="image"
            )
        chosen = (format or getattr(image, "format", None) or "PNG").upper()
        if chosen not in _PILLOW_FORMATS:
            if format is not None:
                raise InvalidInputError(
                    f"format {format!r} is not one providers take; use PNG, JPEG, WEBP or GIF",
                    field="format",
                )
            chosen = "PNG"
        if chosen == "JPEG" and getattr(image, "mode", "RGB") not in ("RGB", "L", "CMYK"):
            image = image.convert("RGB")  # JPEG has no alpha channel
        buffer = io.BytesIO()
        image.save(buffer, format=chosen)
        return ImageContent.from_bytes(buffer.getvalue(), max_bytes=max_bytes)
