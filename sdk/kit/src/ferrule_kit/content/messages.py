"""The public data model: messages and their parts, with one cattrs converter for the wire.

Python objects follow the seeds (``Message(role="user", contents="Hi")``,
``resp.message.contents[0]``, ``Part.Text``); on the wire a message is the dict the
runtime seed shows::

    {"role": "user", "content": [{"type": "text", "text": "Hi"}]}

with parts of the types content plugins register in the open part-type registry
(`ferrule_kit.content.parts`; OpenAI-shaped on the wire, ``{"type": "image_url", "image_url":
{"url": ...}}`` for ferrule-image), assistant ``reasoning`` parts and ``tool_calls``, and a
tool message's ``tool_call_id``. `converter` (built on the kernel's strict converter) turns
one into the other both ways; text is built in, every other part type is the registry's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, Protocol

import attrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from ferrule_kernel import (
    InvalidInputError,
    field_errors,
    make_converter,
    type_checked,
)

from .parts import check_fields, registry, required
from .policy import ContentPolicy

Role = Literal["system", "user", "assistant", "tool"]


@attrs.frozen
class TextPart:
    """Text, in any message."""

    text: str
    type: Literal["text"] = "text"


class ContentPart(Protocol):
    """A part of a message's contents: a `TextPart` or an instance of a registered part
    type (`ferrule_kit.content.parts`), whose ``type`` is its part type's name."""

    @property
    def type(self) -> str: ...


@attrs.frozen
class ReasoningPart:
    """A model's reasoning text; ``signature`` is the provider's opaque token that must be
    sent back unchanged (Anthropic thinking, Gemini thought signatures)."""

    text: str = ""
    signature: str | None = None
    type: Literal["text"] = "text"


@attrs.frozen
class ValuePart:
    """A structured value (JSON-like) in a message: Ailoy's ``Part.Value``, as a tool
    result. On the wire, and so to every model, it is text: its JSON."""

    value: Any
    type: Literal["value"] = "value"

    @property
    def text(self) -> str:
        return self.value if isinstance(self.value, str) else json.dumps(self.value)


@attrs.frozen
class ToolCall:
    """A model's request to call a tool. ``arguments`` is the parsed JSON object."""

    id: str
    name: str
    arguments: Any = attrs.field(factory=dict)

    @property
    def function(self) -> ToolCall:
        """The call itself, with its ``name`` and ``arguments`` (Ailoy's
        ``Part.Function.function``)."""
        return self


class _PartNamespace(type):
    def __getattr__(cls, name: str) -> type:
        # Part.Image, Part.Document, ...: the class of a registered part type, by its name.
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return registry.part_class(name.lower())
        except KeyError:
            raise AttributeError(
                f"Part has no {name!r}: no installed content plugin registers a part type "
                f"{name.lower()!r}"
            ) from None


class Part(metaclass=_PartNamespace):
    """Namespace of part classes, as in ``isinstance(part, Part.Text)``; ``Part.Image``,
    ``Part.Audio``, ... are the classes of the installed part types."""

    Text = TextPart
    Reasoning = ReasoningPart
    Function = ToolCall
    Value = ValuePart

    # Ailoy 0.2's image constructors, over the image content plugin (ferrule-image).
    @staticmethod
    def image_from_bytes(data: bytes) -> ContentPart:
        """An image part of these bytes (PNG, JPEG, WEBP or GIF, sniffed)."""
        part: ContentPart = _image_content().from_bytes(data)
        return part

    @staticmethod
    def image_from_base64(data: str) -> ContentPart:
        """An image part of base64 text."""
        import base64
        import binascii

        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise InvalidInputError("not base64 text", field="data") from None
        return Part.image_from_bytes(raw)

    @staticmethod
    def image_from_url(url: str) -> ContentPart:
        """An image part pointing at a public http(s) URL (the provider fetches it)."""
        part: ContentPart = _image_content().from_url(url)
        return part


def _image_content() -> Any:
    try:
        return registry.export("ImageContent")
    except KeyError:
        raise InvalidInputError(
            "image parts come with the ferrule-image content plugin, which is not installed: "
            "pip install ferrule-image",
            field="contents",
        ) from None


def _contents(value: Any) -> list[ContentPart]:
    if isinstance(value, (str, TextPart)) or not isinstance(value, Iterable):
        value = [value]  # one part (parts are not iterable)
    parts: list[ContentPart] = []
    for index, part in enumerate(value):
        if isinstance(part, str):
            part = TextPart(part)
        elif not isinstance(part, (TextPart, ValuePart)) and not registry.is_part(part):
            raise InvalidInputError(
                f"expected a string, a TextPart or a part of a registered part type, got "
                f"{registry.describe(part)}",
                field=f"contents[{index}]",
            )
        parts.append(part)
    return parts


@attrs.define
class Message:
    """One message of a conversation."""

    role: Role
    # "content" on the wire (the seeds' shape): the metadata makes errors and schemas say so.
    contents: list[ContentPart] = attrs.field(
        factory=list, converter=_contents, metadata={"wire_key": "content"}
    )
    reasoning: list[ReasoningPart] = attrs.field(factory=list)
    tool_calls: list[ToolCall] = attrs.field(factory=list)
    tool_call_id: str | None = None

    def __attrs_post_init__(self) -> None:
        # What no provider accepts is refused here, naming the field, not deep in a
        # backend: a tool result answers one call, and a user turn says something.
        if self.role == "tool" and self.tool_call_id is None:
            raise InvalidInputError(
                "required field missing: a tool message answers the tool call of this id",
                field="tool_call_id",
            )
        if self.role == "user" and not self.contents:
            raise InvalidInputError(
                "required field missing: a user message needs content", field="content"
            )

    @property
    def text(self) -> str:
        """All text parts joined (a `ValuePart` is its JSON text, as on the wire)."""
        return "".join(p.text for p in self.contents if isinstance(p, (TextPart, ValuePart)))

    @property
    def thinking(self) -> str | None:
        """The reasoning's text (Ailoy's name), or None without reasoning; setting it
        makes the reasoning that text (its signature kept)."""
        return "".join(r.text for r in self.reasoning) if self.reasoning else None

    @thinking.setter
    def thinking(self, text: str | None) -> None:
        signature = self.signature
        if text is None and signature is None:
            self.reasoning = []
        else:
            self.reasoning = [ReasoningPart(text or "", signature)]

    @property
    def signature(self) -> str | None:
        """The reasoning's provider signature (Ailoy's name), or None."""
        return next((r.signature for r in self.reasoning if r.signature is not None), None)

    @property
    def id(self) -> str | None:
        """The tool call a tool message answers (Ailoy's ``id``); None for other roles."""
        return self.tool_call_id

    @id.setter
    def id(self, value: str | None) -> None:
        self.tool_call_id = value

    def to_dict(self) -> dict[str, Any]:
        return converter.unstructure(self)

    @classmethod
    def from_dict(cls, data: Any) -> Message:
        return structure_wire(data, Message, "message")


def system_text(message: Message, where: str, provider: str) -> str:
    """The text of a system message, for providers whose system prompt is text only: any
    other part is refused with `UnsupportedContentError` naming it (``where`` is the
    message's path, e.g. ``$.messages[0]``)."""
    from ferrule_kit.errors import UnsupportedContentError

    for index, part in enumerate(message.contents):
        if not isinstance(part, TextPart):
            raise UnsupportedContentError(
                "a system message may hold text only",
                field=f"{where}.content[{index}]",
                provider=provider,
                content_type=part.type,
            )
    return message.text


#: A provider turn's blocks (or parts): what its wire module makes of one message.
Blocks = list[dict[str, Any]]


def _appended(_role: str, previous: Blocks, blocks: Blocks) -> Blocks:
    return previous + blocks


def system_and_turns(
    messages: Sequence[Message],
    provider: str,
    turn: Callable[[Message, str], tuple[str, Blocks]],
    *,
    join: Callable[[str, Blocks, Blocks], Blocks] = _appended,
) -> tuple[list[str], list[tuple[str, Blocks]]]:
    """A conversation split for a provider whose system prompt stands apart and whose
    turns alternate roles (Anthropic's, Gemini's): the system messages' texts
    (`system_text`), and the other messages as ``(role, blocks)`` turns, in order.
    ``turn(message, where)`` gives a message's provider role and blocks (``where`` its
    path, ``$.messages[i]``); a message with no blocks adds nothing, and blocks under the
    role of the turn before become part of it: ``join(role, previous, blocks)``, by default
    appended."""
    system: list[str] = []
    turns: list[tuple[str, Blocks]] = []
    for index, message in enumerate(messages):
        where = f"$.messages[{index}]"
        if message.role == "system":
            if text := system_text(message, where, provider):
                system.append(text)
            continue
        role, blocks = turn(message, where)
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1] = (role, join(role, turns[-1][1], blocks))
        else:
            turns.append((role, blocks))
    return system, turns


def message_text(message: Message, where: str, policy: ContentPolicy) -> str:
    """A message's contents as text, for a model that reads text only (``policy``'s dialect
    is `ferrule_kit.content.parts.TEXT`): text parts joined as in `Message.text`, any other part as
    its content plugin writes it (a document's text), set apart by blank lines; a part with
    no text form is refused with `UnsupportedContentError` naming it (``where`` is the
    message's path, e.g. ``$.messages[0]``)."""
    pieces: list[str] = []
    after_block = False
    for index, part in enumerate(message.contents):
        if isinstance(part, (TextPart, ValuePart)):
            piece, block = part.text, False
        else:
            piece, block = registry.encode(part, policy, f"{where}.content[{index}]"), True
        if pieces and (block or after_block):
            pieces.append("\n\n")
        pieces.append(piece)
        after_block = block
    return "".join(pieces)


# -- the wire converter ---------------------------------------------------------------

converter = make_converter()


def _unstructure_part(part: ContentPart) -> dict[str, Any]:
    if isinstance(part, (TextPart, ValuePart)):
        return {"type": "text", "text": part.text}
    return registry.unstructure(part)


def _structure_part(data: Any) -> ContentPart:
    if not isinstance(data, dict):
        raise TypeError(f"expected object, got {type(data).__name__}")
    if data.get("type") == "text":
        check_fields(data, _TEXT_FIELDS)
        return TextPart(required(data, "text", str, "text"))
    part: ContentPart = registry.structure(data)
    return part


_TEXT_FIELDS = frozenset({"type", "text"})
converter.register_unstructure_hook(TextPart, _unstructure_part)
converter.register_unstructure_hook(ValuePart, _unstructure_part)
converter.register_unstructure_hook_func(
    lambda t: t == list[ContentPart], lambda parts: [_unstructure_part(p) for p in parts]
)


def _unstructure_reasoning(part: ReasoningPart) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "text", "text": part.text}
    if part.signature is not None:
        out["signature"] = part.signature
    return out


converter.register_unstructure_hook(ReasoningPart, _unstructure_reasoning)


def _unstructure_tool_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def _structure_tool_call(data: Any, _type: Any) -> ToolCall:
    if not isinstance(data, dict):
        raise TypeError(f"expected object, got {type(data).__name__}")
    function = required(data, "function", dict, "function")
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):  # OpenAI sends arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f"not valid JSON ({exc.msg})", field="function.arguments"
            ) from None
    return ToolCall(
        id=required(data, "id", str, "id"),
        name=required(function, "name", str, "function.name"),
        arguments=arguments,
    )


converter.register_unstructure_hook(ToolCall, _unstructure_tool_call)
converter.register_structure_hook(ToolCall, _structure_tool_call)


def _structure_content(data: Any, _type: Any) -> list[ContentPart]:
    # The wire allows a bare string for content, as OpenAI's API does.
    if isinstance(data, str):
        return [TextPart(data)]
    if data is None:
        return []
    if not isinstance(data, list):
        raise TypeError(f"expected array or string, got {type(data).__name__}")
    parts, errors = [], []
    for index, item in enumerate(data):
        try:
            parts.append(_structure_part(item))
        except (InvalidInputError, TypeError, ValueError) as exc:
            errors.extend(field_errors(exc, f"[{index}]"))
    if errors:
        raise InvalidInputError("; ".join(e["message"] for e in errors), errors=errors)
    return parts


converter.register_structure_hook_func(lambda t: t == list[ContentPart], _structure_content)


_message_unstructure = make_dict_unstructure_fn(
    Message, converter, contents=override(rename="content"), _cattrs_omit_if_default=True
)


def _unstructure_message(message: Message) -> dict[str, Any]:
    out = _message_unstructure(message)
    out.setdefault("content", [])
    return out


converter.register_unstructure_hook(Message, _unstructure_message)
converter.register_structure_hook(
    Message,
    type_checked(
        dict,
        "object",
        make_dict_structure_fn(
            Message,
            converter,
            contents=override(rename="content"),
            _cattrs_forbid_extra_keys=True,
            _cattrs_detailed_validation=True,
        ),
    ),
)


def structure_wire(data: Any, cls: type, target: str) -> Any:
    """Structure wire data into ``cls`` with field-path errors (see ferrule_kernel.structure_input)."""
    from ferrule_kernel import structure_input

    return structure_input(data, cls, target=target, conv=converter)
