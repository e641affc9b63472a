"""Agno's media classes (`Image`, `Audio`, `Video`, `File`) as ferrule's content parts.

Each names its media one way: ``url``, ``filepath`` (read by this process, from code: never
from the wire) or ``content`` (bytes). A run's ``images=`` / ``audio=`` / ``videos=`` /
``files=`` turn them into parts of the user message with `to_part`, through the content
plugins (ferrule-image, ferrule-audio, ferrule-document), which check size and format. Only
an image may be a URL (the provider fetches a public http(s) address; ferrule fetches
nothing); ferrule has no video parts, so a `Video` is refused when it is sent.
"""

from __future__ import annotations

import os
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.messages import ContentPart
from ferrule_kit.parts import registry

_PLUGINS = {
    "ImageContent": "ferrule-image",
    "AudioContent": "ferrule-audio",
    "DocumentContent": "ferrule-document",
}


def _content_class(export: str, field: str) -> Any:
    try:
        return registry.export(export)
    except KeyError:
        plugin = _PLUGINS[export]
        raise InvalidInputError(
            f"{field}: these parts come with the {plugin} content plugin, which is not "
            f"installed: pip install {plugin}",
            field=field,
        ) from None


def _bytes(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, (bytes, bytearray)):
        raise InvalidInputError(
            f"content must be bytes, got {type(value).__name__}", field=attribute.name
        )


def _path(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, (str, os.PathLike)):
        raise InvalidInputError(
            f"filepath must be a path, got {type(value).__name__}", field=attribute.name
        )


def _text(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(
            f"{attribute.name} must be a string, got {type(value).__name__}",
            field=attribute.name,
        )


@attrs.define(kw_only=True)
class Media:
    """What every media class has: its source (exactly one of ``url``, ``filepath``,
    ``content``), its ``format`` / ``mime_type`` and Agno's ``id``."""

    url: str | None = attrs.field(default=None, validator=_text)
    filepath: str | os.PathLike[str] | None = attrs.field(default=None, validator=_path)
    content: bytes | None = attrs.field(default=None, validator=_bytes, repr=False)
    format: str | None = attrs.field(default=None, validator=_text)
    mime_type: str | None = attrs.field(default=None, validator=_text)
    id: str | None = attrs.field(default=None, validator=_text)

    def __attrs_post_init__(self) -> None:
        given = [name for name in ("url", "filepath", "content") if getattr(self, name)]
        if len(given) != 1:
            raise InvalidInputError(
                f"{type(self).__name__} takes exactly one of url, filepath and content, "
                f"got {', '.join(given) or 'none'}",
                field=given[1] if len(given) > 1 else "content",
            )

    def to_part(self, field: str) -> ContentPart:
        """This media as a content part of a user message; ``field`` names it in errors."""
        raise NotImplementedError  # each media class says how

    def _no_url(self, field: str) -> None:
        if self.url is not None:
            raise InvalidInputError(
                f"{field}: ferrule does not fetch {type(self).__name__.lower()} URLs; read "
                "the file into content= or give its filepath=",
                field=f"{field}.url",
            )


@attrs.define(kw_only=True)
class Image(Media):
    """An image (PNG, JPEG, WEBP or GIF); a ``url`` must be public http(s)."""

    detail: str | None = attrs.field(default=None, validator=_text)
    alt_text: str | None = attrs.field(default=None, validator=_text)

    def to_part(self, field: str) -> ContentPart:
        images = _content_class("ImageContent", field)
        part: ContentPart
        if self.url is not None:
            part = images.from_url(self.url)
        elif self.filepath is not None:
            part = images.from_path(self.filepath)
        else:
            part = images.from_bytes(bytes(self.content or b""), self.mime_type)
        return part


@attrs.define(kw_only=True)
class Audio(Media):
    """A sound (``format`` such as ``"wav"``, else the file's extension or the
    ``mime_type``'s subtype)."""

    sample_rate: int | None = None
    channels: int | None = None

    def to_part(self, field: str) -> ContentPart:
        self._no_url(field)
        sounds = _content_class("AudioContent", field)
        format = self.format
        if format is None and self.mime_type is not None:
            format = self.mime_type.rpartition("/")[2]
        part: ContentPart
        if self.filepath is not None:
            part = sounds.from_path(self.filepath, format)
        elif format is None:
            raise InvalidInputError(
                f"{field}: audio content needs its format (format='wav')", field=f"{field}.format"
            )
        else:
            part = sounds.from_bytes(bytes(self.content or b""), format)
        return part


@attrs.define(kw_only=True)
class Video(Media):
    """A video: kept for Agno's programs, refused when sent (ferrule has no video parts)."""

    def to_part(self, field: str) -> ContentPart:
        raise InvalidInputError(
            f"{field}: ferrule has no video parts; no installed content plugin sends video",
            field=field,
        )


@attrs.define(kw_only=True)
class File(Media):
    """A document (PDF, text, ...), with its ``filename`` (Agno's ``name`` too)."""

    filename: str | None = attrs.field(default=None, validator=_text)
    name: str | None = attrs.field(default=None, validator=_text)

    def to_part(self, field: str) -> ContentPart:
        self._no_url(field)
        documents = _content_class("DocumentContent", field)
        part: ContentPart
        if self.filepath is not None:
            part = documents.from_path(self.filepath)
        else:
            part = documents.from_bytes(
                bytes(self.content or b""), self.mime_type, filename=self.filename or self.name
            )
        return part


def media_files(files: Any, images: Any = (), audio: Any = (), videos: Any = ()) -> list[Any]:
    """A run's ``images``, ``audio`` and ``videos`` (Agno's keywords, each a list of the
    matching media class), then its ``files``, in Agno's order; the run makes them parts."""
    if not (images or audio or videos):
        return files  # as given: the run checks it
    combined: list[Any] = []
    for keyword, values, kind in (
        ("images", images, Image),
        ("audio", audio, Audio),
        ("videos", videos, Video),
    ):
        if values is None:
            continue
        if isinstance(values, Media) or not isinstance(values, (list, tuple)):
            raise InvalidInputError(
                f"{keyword} is a list of {kind.__name__} objects", field=keyword
            )
        for index, value in enumerate(values):
            if not isinstance(value, kind):
                raise InvalidInputError(
                    f"expected a {kind.__name__}, got {type(value).__name__}",
                    field=f"{keyword}[{index}]",
                )
        combined.extend(values)
    return combined + list(files or ())
