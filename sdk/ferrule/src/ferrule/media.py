"""Agno's media classes (`Image`, `Audio`, `Video`, `File`) as ferrule's content parts.

Each names its media one way: ``url``, ``filepath`` (read by this process, from code: never
from the wire) or ``content`` (bytes); a `File` may instead be only an ``id`` or a provider's
``external`` file. Each gets an ``id`` (a UUID unless given); ``to_dict`` / ``from_base64``
round-trip it as base64, ``get_content_bytes`` reads its bytes (a URL's too: ferrule does not
fetch URLs, so that is refused). A run's ``images=`` / ``audio=`` / ``videos=`` /
``files=`` turn them into parts of the user message with `to_part`, through the content
plugins (ferrule-image, ferrule-audio, ferrule-document), which check size and format. Only
an image may be a URL (the provider fetches a public http(s) address; ferrule fetches
nothing); ferrule has no video parts, so a `Video` is refused when it is sent.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import os
import uuid
from pathlib import Path
from typing import Any, TypeVar

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import ContentPart
from ferrule_kit.content.parts import registry

MediaT = TypeVar("MediaT", bound="Media")

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


def _audio_content(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, (bytes, bytearray, str)):
        raise InvalidInputError(
            f"content must be bytes or base64 text, got {type(value).__name__}",
            field=attribute.name,
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


def _new_id() -> str:
    return str(uuid.uuid4())


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
        if self.id is None:
            self.id = _new_id()
        self.validate_and_normalize_content(
            {name: getattr(self, name) for name in ("url", "filepath", "content")}
        )

    @classmethod
    def validate_and_normalize_content(cls, data: Any) -> Any:
        """``data`` (a dict of fields) checked to name exactly one source."""
        if isinstance(data, dict):
            given = [name for name in ("url", "filepath", "content") if data.get(name)]
            if len(given) != 1:
                raise InvalidInputError(
                    f"{cls.__name__} takes exactly one of url, filepath and content, "
                    f"got {', '.join(given) or 'none'}",
                    field=given[1] if len(given) > 1 else "content",
                )
        return data

    def get_content_bytes(self) -> bytes | None:
        """The media's bytes: its content, or its file's (a URL is not fetched)."""
        if self.content is not None:
            return bytes(self.content)
        if self.filepath is not None:
            return Path(self.filepath).read_bytes()
        if self.url is not None:
            self._no_url("get_content_bytes")
        return None

    async def aget_content_bytes(self) -> bytes | None:
        """`get_content_bytes`, the file read off the event loop."""
        return await asyncio.to_thread(self.get_content_bytes)

    def to_base64(self) -> str | None:
        """The bytes as base64 text (None without content or file)."""
        data = self.get_content_bytes() if self.url is None else None
        return base64.b64encode(data).decode("ascii") if data else None

    @classmethod
    def from_base64(
        cls: type[MediaT],
        base64_content: str,
        id: str | None = None,
        mime_type: str | None = None,
        format: str | None = None,
        **kwargs: Any,
    ) -> MediaT:
        """The media of base64 text (text that is not base64 is taken as UTF-8 bytes)."""
        try:
            data = base64.b64decode(base64_content, validate=True)
        except (binascii.Error, ValueError):
            data = base64_content.encode("utf-8")
        return cls(content=data, id=id or _new_id(), mime_type=mime_type, format=format, **kwargs)

    @classmethod
    def from_dict(cls: type[MediaT], data: dict[str, Any]) -> MediaT:
        """The media of ``to_dict``'s dict (base64 content decoded)."""
        known = {f.name for f in attrs.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if isinstance(values.get("content"), str):
            values["content"] = base64.b64decode(values["content"])
        return cls(**values)

    def to_dict(self, include_base64_content: bool = True) -> dict[str, Any]:
        """The media's fields that are set; its bytes as base64 unless told not to."""
        out: dict[str, Any] = {}
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if field.name == "content" or value is None:
                continue
            out[field.name] = str(value) if field.name == "filepath" else value
        if include_base64_content and self.content:
            data = self.get_content_bytes() or b""
            out["content"] = base64.b64encode(data).decode("ascii")
        return out

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
    original_prompt: str | None = None
    revised_prompt: str | None = None
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
    ``mime_type``'s subtype).

    A model's spoken reply (``RunOutput.response_audio``) holds its ``content`` as the
    provider's SDK gives it, which Agno's programs rely on: OpenAI's as base64 text (decoded
    by `ferrule.utils.audio.write_audio_to_file`), Gemini's as bytes (raw 24 kHz PCM:
    `ferrule.utils.audio.write_wav_audio_to_file`); ``transcript`` is what it says, ``id``
    and ``expires_at`` how and until when OpenAI keeps it. A streamed piece may hold only
    its transcript."""

    content: bytes | str | None = attrs.field(  # type: ignore[assignment]
        default=None, validator=_audio_content, repr=False
    )
    duration: float | None = None
    sample_rate: int | None = 24000
    channels: int | None = 1
    transcript: str | None = None
    expires_at: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.transcript is not None and not (self.content or self.url or self.filepath):
            self.id = self.id or _new_id()  # a streamed reply's words, without sound
            return
        super().__attrs_post_init__()

    def get_content_bytes(self) -> bytes | None:
        """The sound's bytes (base64 text content decoded)."""
        if isinstance(self.content, str):
            return base64.b64decode(self.content)
        return super().get_content_bytes()

    @classmethod
    def from_base64(  # type: ignore[override]
        cls,
        base64_content: str,
        id: str | None = None,
        *,
        mime_type: str | None = None,
        transcript: str | None = None,
        expires_at: int | None = None,
        sample_rate: int | None = 24000,
        channels: int | None = 1,
        **kwargs: Any,
    ) -> Audio:
        """The sound of base64 text."""
        return super().from_base64(
            base64_content,
            id=id,
            mime_type=mime_type,
            transcript=transcript,
            expires_at=expires_at,
            sample_rate=sample_rate,
            channels=channels,
            **kwargs,
        )

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
            part = sounds.from_bytes(self.get_content_bytes() or b"", format)
        return part


@attrs.define(kw_only=True)
class Video(Media):
    """A video: kept for Agno's programs, refused when sent (ferrule has no video parts)."""

    duration: float | None = None
    width: int | None = None
    height: int | None = None
    fps: float | None = None
    eta: str | None = None
    original_prompt: str | None = None
    revised_prompt: str | None = None

    def to_part(self, field: str) -> ContentPart:
        raise InvalidInputError(
            f"{field}: ferrule has no video parts; no installed content plugin sends video",
            field=field,
        )


#: The document types a `File` may declare (``mime_type``).
DOCUMENT_MIME_TYPES = (
    "application/pdf",
    "application/json",
    "application/x-javascript",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/msword",
    "application/vnd.ms-powerpoint",
    "application/vnd.ms-excel",
    "application/vnd.ms-outlook",
    "text/javascript",
    "application/x-python",
    "text/x-python",
    "text/plain",
    "text/html",
    "text/css",
    "text/markdown",
    "text/csv",
    "text/xml",
    "text/rtf",
)


@attrs.define(kw_only=True)
class File(Media):
    """A document (PDF, text, ...), with its ``filename`` (Agno's ``name`` too). Besides
    ``url``, ``filepath`` and ``content``, it may be only an ``id`` or a provider's
    ``external`` file object (kept, not sent: ferrule sends a file's bytes)."""

    file_type: str | None = None
    filename: str | None = attrs.field(default=None, validator=_text)
    size: int | None = None
    external: Any = None
    name: str | None = attrs.field(default=None, validator=_text)
    citations: bool | None = None

    def __attrs_post_init__(self) -> None:
        self.check_at_least_one_source(attrs.asdict(self, recurse=False))
        if self.id is None:
            self.id = _new_id()
        self.validate_mime_type(self.mime_type)

    @classmethod
    def check_at_least_one_source(cls, data: Any) -> Any:
        """``data`` (a dict of fields) checked to name a source: one of ``url``,
        ``filepath``, ``content``, or else an ``id`` or ``external``."""
        if isinstance(data, dict):
            sources = [n for n in ("url", "filepath", "content") if data.get(n)]
            if len(sources) > 1:
                raise InvalidInputError(
                    f"File takes one of url, filepath and content, got {', '.join(sources)}",
                    field=sources[1],
                )
            if not sources and not data.get("external") and not data.get("id"):
                raise InvalidInputError(
                    "File needs one of id, url, filepath, content or external", field="content"
                )
        return data

    @classmethod
    def validate_mime_type(cls, v: Any) -> Any:
        """``v`` checked to be one of `valid_mime_types` (or None)."""
        if v is not None and v not in cls.valid_mime_types():
            raise InvalidInputError(
                f"not a document type ferrule's File takes: {v!r}", field="mime_type"
            )
        return v

    @classmethod
    def valid_mime_types(cls) -> list[str]:
        return list(DOCUMENT_MIME_TYPES)

    @property
    def file_url_content(self) -> tuple[bytes, str] | None:
        """A URL file's bytes and type: ferrule does not fetch URLs, so this refuses."""
        self._no_url("file_url_content")
        return None

    @classmethod
    def from_base64(  # type: ignore[override]
        cls,
        base64_content: str,
        id: str | None = None,
        mime_type: str | None = None,
        filename: str | None = None,
        name: str | None = None,
        format: str | None = None,
    ) -> File:
        """The document of base64 text (``text/*`` content may be the text itself)."""
        if mime_type and mime_type.startswith("text/"):
            try:
                data = base64.b64decode(base64_content, validate=True)
                data.decode("utf-8")
            except (binascii.Error, ValueError):
                data = base64_content.encode("utf-8")
            return cls(
                content=data,
                id=id or _new_id(),
                mime_type=mime_type,
                filename=filename,
                name=name,
                format=format,
            )
        return super().from_base64(
            base64_content, id=id, mime_type=mime_type, format=format, filename=filename, name=name
        )

    def to_part(self, field: str) -> ContentPart:
        self._no_url(field)
        if self.filepath is None and self.content is None:
            raise InvalidInputError(
                f"{field}: a File of only an id or an external object has no bytes to send; "
                "give its content= or filepath=",
                field=field,
            )
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


# -- what a model answers with --------------------------------------------------------------


def reply_audio(data: str, audio_format: str, **fields: Any) -> Audio:
    """A model's sound (base64 ``data`` in ``audio_format``) as Agno's `Audio`, ``content``
    as the provider's SDK gives it: bytes where the format is a MIME type (Gemini's raw
    samples, ``audio/L16;codec=pcm;rate=24000``), else base64 text (OpenAI's ``wav``,
    ``pcm16``...) with the provider's ``id``; ``fields``: ``id``, ``transcript``,
    ``expires_at`` (None ones left out)."""
    given = {k: v for k, v in fields.items() if v is not None and k in ("transcript", "expires_at")}
    if "/" in audio_format:
        content = base64.b64decode(data) if data else None
        return Audio(content=content, mime_type=audio_format, **given)
    return Audio(content=data or None, format=audio_format, id=fields.get("id") or None, **given)


def reply_media_of(part: Any) -> Image | Audio | None:
    """The engine's image or audio part of a model's reply as Agno's object (None for any
    other part, or an image by URL)."""
    kind = getattr(part, "type", None)
    if kind == "image" and getattr(part, "data", None):
        return Image(
            content=base64.b64decode(part.data), mime_type=getattr(part, "mime_type", None)
        )
    if kind == "audio":
        fields = {k: getattr(part, k, None) for k in ("id", "transcript", "expires_at")}
        return reply_audio(part.data, part.format, **fields)
    return None
