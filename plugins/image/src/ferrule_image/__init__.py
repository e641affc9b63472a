"""ferrule-image: the image part type, and `ImageContent`, which builds `ImagePart`s from a
public URL, bytes, a file or a Pillow image, checking the type (sniffed from the bytes)
and the size first.

    from ferrule import ImageContent          # or: from ferrule_image import ImageContent
    ImageContent.from_url("https://example.com/cat.jpg")
    ImageContent.from_path("cat.png")
    ImageContent.from_pillow(PIL.Image.open("cat.png"))

The plugin (`ferrule_image.plugin`) registers the part type ``image`` (wire type
``image_url``) in the kit's part-type registry, with its encoders for the OpenAI,
OpenAI-compatible, Anthropic and Gemini dialects (`ferrule_image.encoders`); each provider
checks its own limits (types, sizes, URL support) before sending. Pillow is never
imported here: `from_pillow` only calls the ``save`` method of the image it is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kit.content.parts import lazy_attributes

if TYPE_CHECKING:
    from .content import MAX_IMAGE_BYTES, MIME_TYPES, ImageContent, sniff_image_mime
    from .part import ImagePart

__all__ = ["MAX_IMAGE_BYTES", "MIME_TYPES", "ImageContent", "ImagePart", "sniff_image_mime"]

# Discovery imports this package on every Runtime() (for ferrule_image.plugin): the public
# names are imported when first used.
__getattr__ = lazy_attributes(
    __name__,
    {
        "ImageContent": ".content",
        "ImagePart": ".part",
        "MAX_IMAGE_BYTES": ".content",
        "MIME_TYPES": ".content",
        "sniff_image_mime": ".content",
    },
)
