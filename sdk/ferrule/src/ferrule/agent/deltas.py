"""Ailoy 0.2's streamed output over ferrule's messages: `MessageDelta` (a piece of a
message, ``+=``-accumulated and `MessageDelta.finish`-ed into a `ferrule.Message`), its
`PartDelta` parts, `FinishReason`, and `MessageDeltaOutput` (a delta and why the stream
ended, if it did): what `LangModel.infer_delta` and `Agent.run_delta` yield.

A delta finishes into ferrule's own `Message`: its ``thinking`` is the message's reasoning,
a tool message's ``id`` its ``tool_call_id``, a function delta a `ToolCall`, a value delta
a `ValuePart`. `delta_of` turns one item of a model's ``infer`` stream (the kernel's wire
dict) into a delta.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message, ReasoningPart, Role, TextPart, ToolCall, ValuePart

__all__ = [
    "FinishReason",
    "MessageDelta",
    "MessageDeltaOutput",
    "PartDelta",
    "PartDeltaFunction",
    "delta_of",
    "finish_reason_of",
    "messages_of",
]


# -- why a stream ended ------------------------------------------------------------------


@attrs.frozen
class FinishReason:
    """Why a model's streamed generation ended, compared by value:
    ``out.finish_reason == FinishReason.Stop()``. ``Refusal`` carries the reason."""

    Stop: ClassVar[type[_Stop]]
    Length: ClassVar[type[_Length]]
    ToolCall: ClassVar[type[_ToolCall]]
    Refusal: ClassVar[type[_Refusal]]


@attrs.frozen
class _Stop(FinishReason):
    """The model stopped by itself (end of turn, a stop sequence)."""


@attrs.frozen
class _Length(FinishReason):
    """The token limit was reached."""


@attrs.frozen
class _ToolCall(FinishReason):
    """The model called tools and waits for their results."""


@attrs.frozen
class _Refusal(FinishReason):
    """The provider refused or filtered the content; ``reason`` says what it said."""

    reason: str = ""


for _variant, _name in (
    (_Stop, "Stop"),
    (_Length, "Length"),
    (_ToolCall, "ToolCall"),
    (_Refusal, "Refusal"),
):
    _variant.__name__ = _variant.__qualname__ = f"FinishReason.{_name}"
    setattr(FinishReason, _name, _variant)

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": _Stop(),
    "length": _Length(),
    "tool_calls": _ToolCall(),
    "content_filter": _Refusal("content_filter"),
}


def finish_reason_of(reason: str | None) -> FinishReason | None:
    """Ailoy's finish reason for a model stream's (``"stop"``, ``"tool_calls"``, ...)."""
    if reason is None:
        return None
    return _FINISH_REASONS.get(reason, _Refusal(reason))


# -- parts of a delta --------------------------------------------------------------------


class PartDeltaFunction:
    """A function call's piece: `Verbatim` text (a model's raw call text),
    `WithStringArgs` (a name and JSON text arguments) or `WithParsedArgs` (a name and
    the parsed arguments)."""

    Verbatim: ClassVar[type[_Verbatim]]
    WithStringArgs: ClassVar[type[_WithStringArgs]]
    WithParsedArgs: ClassVar[type[_WithParsedArgs]]


@attrs.frozen
class _Verbatim(PartDeltaFunction):
    text: str


@attrs.frozen
class _WithStringArgs(PartDeltaFunction):
    name: str
    arguments: str


@attrs.frozen
class _WithParsedArgs(PartDeltaFunction):
    name: str
    arguments: Any


class PartDelta:
    """A piece of a message part: `Text`, `Function` (a tool call's piece: ``id`` and a
    `PartDeltaFunction`), `Value` (a structured value: a tool's result) or `Null`."""

    Text: ClassVar[type[_TextDelta]]
    Function: ClassVar[type[_FunctionDelta]]
    Value: ClassVar[type[_ValueDelta]]
    Null: ClassVar[type[_NullDelta]]

    @property
    def part_type(self) -> str:
        return type(self).__name__.rpartition(".")[2].lower()


@attrs.frozen
class _TextDelta(PartDelta):
    text: str


@attrs.frozen
class _FunctionDelta(PartDelta):
    id: str | None
    function: PartDeltaFunction


@attrs.frozen
class _ValueDelta(PartDelta):
    value: Any


@attrs.frozen
class _NullDelta(PartDelta):
    pass


for _owner, _variants in (
    (
        PartDeltaFunction,
        {
            "Verbatim": _Verbatim,
            "WithStringArgs": _WithStringArgs,
            "WithParsedArgs": _WithParsedArgs,
        },
    ),
    (
        PartDelta,
        {"Text": _TextDelta, "Function": _FunctionDelta, "Value": _ValueDelta, "Null": _NullDelta},
    ),
):
    for _name, _cls in _variants.items():
        _cls.__name__ = _cls.__qualname__ = f"{_owner.__name__}.{_name}"
        setattr(_owner, _name, _cls)


def _merge(parts: list[PartDelta], incoming: PartDelta) -> None:
    """Append ``incoming`` to ``parts``, joined to the last part when they continue each
    other (text after text; a function's later pieces, which carry no id of their own)."""
    last = parts[-1] if parts else None
    if isinstance(last, _TextDelta) and isinstance(incoming, _TextDelta):
        parts[-1] = _TextDelta(last.text + incoming.text)
        return
    if (
        isinstance(last, _FunctionDelta)
        and isinstance(incoming, _FunctionDelta)
        and (incoming.id is None or incoming.id == last.id)
    ):
        joined = _join_function(last.function, incoming.function)
        if joined is not None:
            parts[-1] = _FunctionDelta(last.id, joined)
            return
    parts.append(incoming)


def _join_function(a: PartDeltaFunction, b: PartDeltaFunction) -> PartDeltaFunction | None:
    if isinstance(a, _Verbatim) and isinstance(b, _Verbatim):
        return _Verbatim(a.text + b.text)
    if isinstance(a, _WithStringArgs) and isinstance(b, _WithStringArgs):
        return _WithStringArgs(a.name + b.name, a.arguments + b.arguments)
    return None


def _tool_call(part: PartDelta, index: int) -> ToolCall:
    if not isinstance(part, _FunctionDelta):
        raise InvalidInputError(
            f"a tool call must be a PartDelta.Function, got {type(part).__name__}",
            field=f"tool_calls[{index}]",
        )
    function = part.function
    if isinstance(function, _Verbatim):
        try:
            data = json.loads(function.text)
            name, arguments = data["name"], data.get("arguments", {})
        except (ValueError, KeyError, TypeError):
            raise InvalidInputError(
                f"not a JSON function call ({{'name', 'arguments'}}): {function.text[:100]!r}",
                field=f"tool_calls[{index}].function.text",
            ) from None
    elif isinstance(function, _WithStringArgs):
        name = function.name
        try:
            arguments = json.loads(function.arguments) if function.arguments.strip() else {}
        except ValueError as exc:
            raise InvalidInputError(
                f"not valid JSON ({exc})", field=f"tool_calls[{index}].function.arguments"
            ) from None
    else:
        assert isinstance(function, _WithParsedArgs)
        name, arguments = function.name, function.arguments
    return ToolCall(id=part.id or f"call_{index}", name=name, arguments=arguments)


def _content(part: PartDelta, index: int) -> TextPart | ValuePart | None:
    if isinstance(part, _TextDelta):
        return TextPart(part.text)
    if isinstance(part, _ValueDelta):
        return ValuePart(part.value)
    if isinstance(part, _NullDelta):
        return None
    raise InvalidInputError(
        f"contents hold text and values, got {type(part).__name__}", field=f"contents[{index}]"
    )


# -- messages ----------------------------------------------------------------------------


def _parts(parts: Iterable[PartDelta]) -> list[PartDelta]:
    return list(parts)


@attrs.define
class MessageDelta:
    """A piece of a message, accumulated with ``+=`` (or ``+``) and turned into a
    `ferrule.Message` by `finish`. Accumulating joins text to text and a tool call's
    pieces to its call, concatenates ``thinking``, and keeps the last ``id`` and
    ``signature``; two different roles cannot be joined."""

    role: Role | None = None
    contents: list[PartDelta] = attrs.field(factory=list, converter=_parts)
    id: str | None = None
    thinking: str | None = None
    tool_calls: list[PartDelta] = attrs.field(factory=list, converter=_parts)
    signature: str | None = None

    def __add__(self, other: MessageDelta) -> MessageDelta:
        out = MessageDelta(
            self.role,
            list(self.contents),
            self.id,
            self.thinking,
            list(self.tool_calls),
            self.signature,
        )
        out += other
        return out

    def __iadd__(self, other: MessageDelta) -> MessageDelta:
        if not isinstance(other, MessageDelta):
            return NotImplemented
        if other.role is not None:
            if self.role is not None and self.role != other.role:
                raise InvalidInputError(
                    f"cannot join a {other.role!r} delta to a {self.role!r} message", field="role"
                )
            self.role = other.role
        for part in other.contents:
            _merge(self.contents, part)
        for part in other.tool_calls:
            _merge(self.tool_calls, part)
        if other.thinking:
            self.thinking = (self.thinking or "") + other.thinking
        self.id = other.id if other.id is not None else self.id
        self.signature = other.signature if other.signature is not None else self.signature
        return self

    def finish(self) -> Message:
        """The accumulated message, as ferrule's `Message`; `InvalidInputError` (naming the
        field) when it has no role or a tool call's arguments are not JSON."""
        if self.role is None:
            raise InvalidInputError("required field missing: no delta gave a role", field="role")
        contents = [c for i, p in enumerate(self.contents) if (c := _content(p, i)) is not None]
        reasoning = []
        if self.thinking or self.signature is not None:
            reasoning.append(ReasoningPart(self.thinking or "", self.signature))
        calls = [_tool_call(p, i) for i, p in enumerate(self.tool_calls)]
        tool_call_id = self.id if self.role == "tool" else None
        return Message(self.role, contents, reasoning, calls, tool_call_id)

    #: `finish`, by the name Ailoy 0.2's streaming guide calls it (``acc.to_message()``).
    to_message = finish


@attrs.define
class MessageDeltaOutput:
    """One item of a delta stream: ``delta``, and ``finish_reason`` on the last delta of
    a message (None before)."""

    delta: MessageDelta
    finish_reason: FinishReason | None = None


def delta_of(item: dict[str, Any]) -> MessageDeltaOutput:
    """One item of a model's ``infer`` stream (ferrule's wire: ``{"message": {...},
    "finish_reason": ...}``) as Ailoy's output: text, reasoning and tool-call pieces (a
    call's first piece names it; its arguments arrive as JSON text)."""
    wire = item["message"]
    contents: list[PartDelta] = [
        _TextDelta(p["text"])
        for p in wire.get("content", ())
        if p.get("type") == "text" and p["text"]
    ]
    thinking = "".join(p.get("text", "") for p in wire.get("reasoning", ())) or None
    signature = next(
        (p["signature"] for p in wire.get("reasoning", ()) if p.get("signature")), None
    )
    calls: list[PartDelta] = []
    for call in wire.get("tool_calls", ()):
        function = call.get("function", {})
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append(
            _FunctionDelta(call.get("id"), _WithStringArgs(function.get("name", ""), arguments))
        )
    delta = MessageDelta("assistant", contents, None, thinking, calls, signature)
    return MessageDeltaOutput(delta, finish_reason_of(item.get("finish_reason")))


def messages_of(messages: str | Sequence[Message]) -> list[Message]:
    """Ailoy's ``messages`` argument: a string is one user message."""
    if isinstance(messages, str):
        return [Message("user", messages)]
    out = list(messages)
    for index, message in enumerate(out):
        if not isinstance(message, Message):
            raise InvalidInputError(
                f"expected a Message, got {type(message).__name__}", field=f"messages[{index}]"
            )
    return out
