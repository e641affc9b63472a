"""Agno's ``agno.models.message``: a conversation's `Message` as Agno's programs read it
(``message.role``, ``message.content``, ``message.tool_calls``...), its `MessageReferences`
(what knowledge added to a user message) and a model's `Citations`.

ferrule's engine keeps messages as `ferrule_kit.content.messages.Message` (``contents``: typed parts);
`Message.from_kit` and `Message.to_kit` translate, so Agno's shape is a view of the same
conversation, not a second one: text parts are the ``content`` string, a tool call is an
OpenAI-style dict (``{"id", "type": "function", "function": {"name", "arguments"}}``, the
arguments as JSON text), reasoning is ``reasoning_content``. A message made by `from_kit`
remembers the engine's message it shows: while its fields are unchanged, `to_kit` gives
that message back exactly (its tool result values, media parts and reasoning signatures,
which Agno's fields cannot all hold).
"""

from __future__ import annotations

import copy
import json
import logging
import shutil
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..media import Audio, File, Image, Video, reply_media_of
from ..metrics import MessageMetrics

if TYPE_CHECKING:
    from ferrule_kit.content.messages import Message as KitMessage

__all__ = ["Citations", "DocumentCitation", "Message", "MessageReferences", "UrlCitation"]

_LOG = logging.getLogger("ferrule")
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}


def _new_id() -> str:
    return str(uuid.uuid4())


def _now() -> int:
    return int(time.time())


def _plain(value: Any) -> Any:
    """A value as JSON-like data (nested attrs classes as dicts, Nones dropped)."""
    if attrs.has(type(value)):
        return {
            k: _plain(v) for k, v in attrs.asdict(value, recurse=False).items() if v is not None
        }
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@attrs.define(kw_only=True)
class MessageReferences:
    """What a knowledge search added to a user message: the query and what it found."""

    query: str
    references: list[dict[str, Any] | str] | None = None
    time: float | None = None


@attrs.define(kw_only=True)
class UrlCitation:
    url: str | None = None
    title: str | None = None


@attrs.define(kw_only=True)
class DocumentCitation:
    document_title: str | None = None
    cited_text: str | None = None
    file_name: str | None = None


@attrs.define(kw_only=True)
class Citations:
    """What a model cited: its raw citations, the searches it made, URLs and documents."""

    raw: Any = None
    search_queries: list[str] | None = None
    urls: list[UrlCitation] | None = None
    documents: list[DocumentCitation] | None = None


def _listed(kind: type[Any], value: Any) -> Any:
    if value is None:
        return None
    return [kind.from_dict(v) if isinstance(v, dict) else v for v in value]


def _audio_list(value: Any) -> Any:
    return _listed(Audio, value)


def _image_list(value: Any) -> Any:
    return _listed(Image, value)


def _video_list(value: Any) -> Any:
    return _listed(Video, value)


def _file_list(value: Any) -> Any:
    return _listed(File, value)


def _audio(value: Any) -> Any:
    return Audio.from_dict(value) if isinstance(value, dict) else value


def _image(value: Any) -> Any:
    return Image.from_dict(value) if isinstance(value, dict) else value


def _video(value: Any) -> Any:
    return Video.from_dict(value) if isinstance(value, dict) else value


def _file(value: Any) -> Any:
    return File.from_dict(value) if isinstance(value, dict) else value


def _metrics(value: Any) -> MessageMetrics:
    if isinstance(value, dict):
        return MessageMetrics.from_dict(value)
    return value if isinstance(value, MessageMetrics) else MessageMetrics()


def _references(value: Any) -> MessageReferences | None:
    return MessageReferences(**value) if isinstance(value, dict) else value


def citations_of(value: Any) -> Citations | None:
    if isinstance(value, dict):
        urls = [UrlCitation(**u) if isinstance(u, dict) else u for u in value.get("urls") or []]
        documents = [
            DocumentCitation(**d) if isinstance(d, dict) else d
            for d in value.get("documents") or []
        ]
        return Citations(
            raw=value.get("raw"),
            search_queries=value.get("search_queries"),
            urls=urls or None,
            documents=documents or None,
        )
    return value


@attrs.define(kw_only=True)
class Message:
    """One message of a conversation, in Agno's shape: ``Message(role="user",
    content="Hi")``. ``content`` is text (or a list of content blocks); an assistant's
    ``tool_calls`` are OpenAI-style dicts; a tool result names its ``tool_call_id``."""

    id: str = attrs.field(factory=_new_id)
    role: str
    content: list[Any] | str | None = None
    compressed_content: str | None = None
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    audio: Sequence[Audio] | None = attrs.field(default=None, converter=_audio_list)
    images: Sequence[Image] | None = attrs.field(default=None, converter=_image_list)
    videos: Sequence[Video] | None = attrs.field(default=None, converter=_video_list)
    files: Sequence[File] | None = attrs.field(default=None, converter=_file_list)
    audio_output: Audio | None = attrs.field(default=None, converter=_audio)
    image_output: Image | None = attrs.field(default=None, converter=_image)
    video_output: Video | None = attrs.field(default=None, converter=_video)
    file_output: File | None = attrs.field(default=None, converter=_file)
    redacted_reasoning_content: str | None = None
    provider_data: dict[str, Any] | None = None
    citations: Citations | None = attrs.field(default=None, converter=citations_of)
    reasoning_content: str | None = None
    tool_name: str | None = None
    tool_args: Any = None
    tool_call_error: bool | None = None
    stop_after_tool_call: bool = False
    add_to_agent_memory: bool = True
    from_history: bool = False
    metrics: MessageMetrics = attrs.field(factory=MessageMetrics, converter=_metrics)
    references: MessageReferences | None = attrs.field(default=None, converter=_references)
    created_at: int = attrs.field(factory=_now)
    temporary: bool = False
    checkpoint_status: str | None = None
    checkpoint_created_at: int | None = None
    # The engine's message `from_kit` made this one from, with the fields `to_kit` reads
    # as they were then: `to_kit` gives it back while they are unchanged.
    _origin: tuple[KitMessage, tuple[Any, ...]] | None = attrs.field(
        default=None, init=False, eq=False, repr=False
    )

    def _kit_fields(self) -> tuple[Any, ...]:
        return copy.deepcopy(
            (
                self.role,
                self.content,
                self.tool_calls,
                self.tool_call_id,
                self.reasoning_content,
                self.images,
                self.audio,
                self.videos,
                self.files,
            )
        )

    def get_content_string(self) -> str:
        """The content as text: the string itself, a list's first text block, or JSON."""
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list) and self.content:
            first = self.content[0]
            if isinstance(first, dict) and "text" in first:
                return str(first.get("text") or "")
            return json.dumps(self.content, ensure_ascii=False, default=str)
        return ""

    def get_content(self, use_compressed_content: bool = False) -> list[Any] | str | None:
        """The content, or its compressed form when asked for and there is one."""
        if use_compressed_content and self.compressed_content is not None:
            return self.compressed_content
        return self.content

    def content_is_valid(self) -> bool:
        """Whether the message says anything (content not None and not empty)."""
        return self.content is not None and len(self.content) > 0

    def to_dict(self) -> dict[str, Any]:
        """The message as a dict: the fields that are set, media and metrics as dicts."""
        names = (
            "id",
            "content",
            "reasoning_content",
            "from_history",
            "compressed_content",
            "stop_after_tool_call",
            "role",
            "name",
            "tool_call_id",
            "tool_name",
            "tool_args",
            "tool_call_error",
            "tool_calls",
            "redacted_reasoning_content",
            "provider_data",
            "checkpoint_status",
            "checkpoint_created_at",
        )
        out: dict[str, Any] = {}
        for name in names:
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (list, dict)) and not value):
                out[name] = value
        for name in ("images", "audio", "videos", "files"):
            if getattr(self, name):
                out[name] = [item.to_dict() for item in getattr(self, name)]
        if self.audio_output is not None:
            out["audio_output"] = self.audio_output.to_dict()
        if self.references is not None:
            out["references"] = _plain(self.references)
        if self.citations is not None:
            out["citations"] = _plain(self.citations)
        metrics = self.metrics.to_dict()
        if metrics:
            out["metrics"] = metrics
        out["created_at"] = self.created_at
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """The message of a dict (``to_dict``'s, or one a store kept); keys a message does
        not have are ignored."""
        known = {f.name for f in attrs.fields(cls) if f.init}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_function_call_dict(self) -> dict[str, Any]:
        """A tool result's fields, as Agno's function-call listings show them."""
        return {
            "content": self.content,
            "tool_call_id": self.tool_call_id,
            "tool_name": self.tool_name,
            "tool_args": self.tool_args,
            "tool_call_error": self.tool_call_error,
            "metrics": self.metrics,
            "created_at": self.created_at,
        }

    def log(
        self, metrics: bool = True, level: str | None = None, use_compressed_content: bool = False
    ) -> None:
        """Write the message to the ``ferrule`` logger (at ``level``: debug by default)."""
        log_level = _LEVELS.get(level or "debug", logging.ERROR)
        if not _LOG.isEnabledFor(log_level):
            return
        width = max(shutil.get_terminal_size((80, 20)).columns - 20, 20)
        lines = [f" {self.role} ".center(width, "=")]
        if self.name:
            lines.append(f"Name: {self.name}")
        if self.tool_call_id:
            lines.append(f"Tool call Id: {self.tool_call_id}")
        if self.reasoning_content:
            lines.append(f"<reasoning>\n{self.reasoning_content}\n</reasoning>")
        content = self.get_content(use_compressed_content)
        if content:
            lines.append(content if isinstance(content, str) else json.dumps(content, default=str))
        for call in self.tool_calls or []:
            function = call.get("function", {})
            lines.append(
                f"Tool call {call.get('id')}: {function.get('name')}({function.get('arguments')})"
            )
        if metrics:
            shown = self.metrics.to_dict()
            if shown:
                lines.append(f"Metrics: {shown}")
        _LOG.log(log_level, "\n".join(lines))

    # -- ferrule's engine ---------------------------------------------------------------------

    @classmethod
    def from_kit(cls, message: KitMessage) -> Message:
        """Agno's view of one of the engine's messages: text (and a tool's result value, as
        its JSON text) is the ``content`` string; with other parts (media), ``content`` is
        the list of every part as a block."""
        from ferrule_kit.content.messages import TextPart, ValuePart

        others = [p for p in message.contents if not isinstance(p, (TextPart, ValuePart))]
        # a model's images and sound are Agno's images / audio_output, its text the content
        replied = [reply_media_of(p) for p in others] if message.role == "assistant" else []
        content: list[Any] | str | None
        if others and not (replied and all(replied)):
            content = [_block(p) for p in message.contents]
        else:
            content = message.text if message.contents else None
        images = [m for m in replied if isinstance(m, Image)] or None
        sounds = [m for m in replied if isinstance(m, Audio)]
        calls = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in message.tool_calls
        ]
        view = cls(
            role=message.role,
            content=content,
            tool_call_id=message.tool_call_id,
            tool_calls=calls or None,
            reasoning_content=message.thinking,
            images=images,
            audio_output=sounds[-1] if sounds else None,
        )
        # the engine's message itself (it never changes a message it made: it makes new
        # ones); `to_kit` hands out copies, so a caller never changes the engine's
        view._origin = (message, view._kit_fields())
        return view

    def to_kit(self) -> KitMessage:
        """This message as the engine's (what a model is sent): the message `from_kit` made
        it from while its fields are unchanged, else one built from them."""
        if self._origin is not None and self._origin[1] == self._kit_fields():
            return copy.deepcopy(self._origin[0])
        from ferrule_kit.content.messages import Message as Kit
        from ferrule_kit.content.messages import ReasoningPart, ToolCall

        calls = [_tool_call(call, ToolCall) for call in self.tool_calls or []]
        role = self.role if self.role in ("system", "user", "assistant", "tool") else "user"
        if self.role == "developer":
            role = "system"
        text = self.get_content_string() if self.content is not None else ""
        reasoning = [ReasoningPart(self.reasoning_content)] if self.reasoning_content else []
        media = [m.to_part("content") for m in (*(self.images or ()), *(self.audio or ()))]
        media += [m.to_part("content") for m in (*(self.files or ()), *(self.videos or ()))]
        contents: list[Any] = [text] if text else []
        return Kit(
            role,  # type: ignore[arg-type]
            [*contents, *media],
            reasoning=reasoning,
            tool_calls=calls,
            tool_call_id=self.tool_call_id,
        )


def _block(part: Any) -> dict[str, Any]:
    from ferrule_kit.content.messages import converter

    block: dict[str, Any] = converter.unstructure(part)
    return block


def _tool_call(call: dict[str, Any], kind: Any) -> Any:
    function = call.get("function") or {}
    arguments = function.get("arguments", call.get("arguments", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            arguments = {"raw": arguments}
    name = function.get("name") or call.get("name") or ""
    return kind(str(call.get("id") or _new_id()), name, arguments)
