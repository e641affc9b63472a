"""The language-model contract every backend implements, local or remote.

A backend is a component type (see `ferrule_kit.models.lmspec.language_model_type`) whose instances have an
``infer`` streaming method taking `InferInput` and yielding items of this shape::

    {"message": {"role": "assistant",
                 "content": [{"type": "text", "text": "<text delta, maybe empty>"}],
                 "reasoning": [{"type": "text", "text": "<reasoning delta>", "signature": ...}],
                 "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                 "function": {"name": "f", "arguments": "<JSON fragment>"}}]},
     "finish_reason": null | "stop" | "length" | "tool_calls" | "content_filter",
     "usage": {"input_tokens": 12, "output_tokens": 34},      # on the last item only
     "stop_sequence": "###"}                                  # the last item, if one matched

``content`` always holds exactly one text part (empty when the item carries none), so
``resp["message"]["content"][0]["text"]`` works on every item, as the runtime seed
uses it; ``reasoning`` and ``tool_calls`` appear only when they carry something, as does
``media``: what the model answers besides text (a model asked for audio or images), each a
content part on ferrule's wire (``{"type": "image_url", "image_url": {"url": "data:..."}}``,
``{"type": "input_audio", "input_audio": {"data", "format", "id", "transcript", ...}}``);
audio arriving in pieces (OpenAI streams it) is one part per piece, the pieces of one reply
joined by `MessageAccumulator` (see `media_delta`). The
last item, and only it, has a ``finish_reason``; it carries the run's total ``usage``,
and ``stop_sequence``, the one of `InferInput.stop` that ended the reply (``finish_reason``
``"stop"``, the string itself cut off), where the backend knows which matched; without
it a ``"stop"`` may be the model's own end or a stop string.
A backend that fails raises a `ferrule_kernel.FerruleError` subclass (see
`ferrule_kit.errors`), which ends the stream with that one typed error.

Use the delta builders below rather than writing the dicts by hand, and
`MessageAccumulator` to fold a stream back into one `Message`.

`ferrule_kit.testing.LanguageModelConformance` checks a backend against all of this.

A backend that can count a prompt's tokens exactly without generating (its own tokenizer,
a provider's free count endpoint) also has ``count_tokens``: the same `InferInput`, one
`TokenCount` back, equal to the ``input_tokens`` its ``infer`` would report for that input.
It declares it with ``language_model_type(..., counts_tokens=True)``; callers check the
component type's methods and, where it is missing, run ``infer`` for one token instead.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Literal, Union

import attrs
from ferrule_kernel import InvalidInputError, in_range

from ferrule_kit.content.messages import ContentPart, Message, ReasoningPart, ToolCall, converter

FinishReason = Literal["stop", "length", "tool_calls", "content_filter"]
ReasoningEffort = Literal["minimal", "low", "medium", "high"]
#: The reasoning switch: off, on, or on at an effort level (see `InferInput.reasoning`).
Reasoning = Literal[False, True, ReasoningEffort]


#: The ``output_schema`` of JSON mode (OpenAI's ``response_format: json_object``): any
#: JSON object. Backends with a JSON mode of their own send that for it.
ANY_JSON_OBJECT: dict[str, Any] = {"type": "object"}


@attrs.frozen
class FunctionDescription:
    """A function the model may call: its name, what it does, its arguments' JSON schema.
    (Ailoy calls this a ``ToolDescription``; ``ferrule.agent.ToolDescription`` is this.)"""

    name: str
    description: str = ""
    parameters: dict[str, Any] = attrs.field(factory=lambda: {"type": "object", "properties": {}})

    @classmethod
    def model_validate(cls, data: Any) -> FunctionDescription:
        """One from ``{"name", "description", "parameters"}`` (and Ailoy's optional
        ``"return"`` schema, which no model is shown), as pydantic spells it. Bad input
        raises `InvalidInputError` naming the field."""
        if not isinstance(data, dict):
            raise InvalidInputError(
                f"a tool description is an object, not {type(data).__name__}", field="$"
            )
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidInputError("must be a non-empty string", field="$.name")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise InvalidInputError("must be a string", field="$.description")
        parameters = data.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(parameters, dict) or parameters.get("type") != "object":
            raise InvalidInputError("must be a JSON schema of type 'object'", field="$.parameters")
        if not isinstance(parameters.get("properties", {}), dict):
            raise InvalidInputError("must be an object", field="$.parameters.properties")
        unknown = set(data) - {"name", "description", "parameters", "return"}
        if unknown:
            raise InvalidInputError(
                f"unknown field(s) {', '.join(sorted(unknown))}", field=f"$.{min(unknown)}"
            )
        return cls(name, description, dict(parameters))


@attrs.frozen
class ToolDescription:
    """A tool the model may call, in the OpenAI shape ``{"type": "function", "function": {...}}``."""

    function: FunctionDescription
    type: Literal["function"] = "function"


@attrs.frozen
class ToolChoiceFunction:
    name: str


@attrs.frozen
class NamedToolChoice:
    """A call of one tool, in the OpenAI shape ``{"type": "function", "function": {"name": ...}}``."""

    function: ToolChoiceFunction
    type: Literal["function"] = "function"


#: ``"auto"``: the model decides; ``"none"``: no call; ``"required"``: at least one call of
#: any tool; a `NamedToolChoice`: a call of that tool.
ToolChoice = Union[Literal["auto", "none", "required"], NamedToolChoice]  # noqa: UP007 (a cattrs key)


_TOOL_CHOICE_MODES = Literal["auto", "none", "required"]


def _structure_tool_choice(value: Any, _type: Any) -> ToolChoice:
    if isinstance(value, str):
        mode: ToolChoice = converter.structure(value, _TOOL_CHOICE_MODES)  # type: ignore[arg-type]
        return mode
    if isinstance(value, dict):
        named: NamedToolChoice = converter.structure(value, NamedToolChoice)
        return named
    raise TypeError(
        "expected 'auto', 'none', 'required' or {'type': 'function', 'function': {'name': ...}}, "
        f"got {type(value).__name__}"
    )


converter.register_structure_hook_func(lambda t: t == ToolChoice, _structure_tool_choice)


@attrs.frozen
class PromptCache:
    """Keep the prompt cached for ``ttl`` (``"5m"``, ``"1h"``), for later requests that
    begin the same way (Anthropic's prompt caching, its top-level ``cache_control``)."""

    ttl: Literal["5m", "1h"] = "5m"


#: ``"fast"``: the provider's faster, dearer inference of the same model (Anthropic's fast
#: mode); ``"standard"``: its usual one.
Speed = Literal["standard", "fast"]


@attrs.frozen
class InferInput:
    """What ``infer`` takes. Only ``messages`` is required."""

    messages: list[Message]
    tools: list[ToolDescription] = attrs.field(factory=list)
    #: Which calls the reply may (or must) make. Backends with no native switch honour a
    #: forced call through `ferrule_kit.models.tool_choice` (a JSON-schema constraint).
    tool_choice: ToolChoice = "auto"
    #: False: no reasoning; True: reasoning at the backend's own depth; an effort level:
    #: reasoning at that depth. One field, so "off, but at high effort" cannot be said.
    reasoning: Reasoning = False
    temperature: float | None = attrs.field(default=None, validator=in_range(0.0, 2.0))
    top_p: float | None = attrs.field(default=None, validator=in_range(0.0, 1.0))
    max_tokens: int | None = attrs.field(default=None, validator=in_range(1))
    stop: list[str] = attrs.field(factory=list)
    #: JSON schema the reply must follow (constrained decoding / the provider's JSON mode).
    output_schema: dict[str, Any] | None = None
    #: Cache this prompt where the provider caches on request (Anthropic); None: as the
    #: backend does by default. Backends that cache by themselves (OpenAI's and Gemini's
    #: APIs, llama.cpp's sequences) or not at all take it and change nothing.
    prompt_cache: PromptCache | None = None
    #: The provider's inference speed where it offers a choice (Anthropic); None: its
    #: default. Other backends take it and change nothing: the reply is the same either way.
    speed: Speed | None = None
    #: Cache marks on the system messages, one per system message in order (fewer: the
    #: rest unmarked): a `PromptCache` caches the prompt up to the end of that message
    #: where the provider caches block by block (Anthropic's ``cache_control`` on each
    #: block of its ``system`` array), None leaves it unmarked. Empty: the backend's own
    #: way. Backends that cache by themselves or not at all take it and change nothing.
    system_cache: list[PromptCache | None] = attrs.field(factory=list)
    #: The provider's own tools, run on its servers (Anthropic's code execution, web search
    #: or advisor; the Responses API's web search, file search...): each the declaration
    #: the provider documents, its ``type`` naming the tool, sent as given. What they did
    #: comes back as opaque reasoning parts (a provider's signature) that go back to it
    #: on the next turn. Only a backend whose provider runs such a tool reads this; the
    #: sdk sends them to no other.
    provider_tools: list[dict[str, Any]] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        if not self.messages:
            raise InvalidInputError("must not be empty", field="$.messages")
        if len(self.system_cache) > sum(m.role == "system" for m in self.messages):
            raise InvalidInputError(
                "has more marks than the request has system messages", field="$.system_cache"
            )
        for index, tool in enumerate(self.provider_tools):
            kind = tool.get("type")
            if not isinstance(kind, str) or not kind or kind == "function":
                raise InvalidInputError(
                    "a provider tool is named by its type (a function tool goes in tools)",
                    field=f"$.provider_tools[{index}].type",
                )
        if self.tool_choice == "required" and not self.tools:
            raise InvalidInputError("'required' needs at least one tool", field="$.tool_choice")
        name = self.forced_tool
        if name is not None and name not in {t.function.name for t in self.tools}:
            raise InvalidInputError(
                f"names the tool {name!r}, which is not among the request's tools",
                field="$.tool_choice.function.name",
            )

    @property
    def forced_tool(self) -> str | None:
        """The tool the reply must call (a `NamedToolChoice`), else None."""
        choice = self.tool_choice
        return choice.function.name if isinstance(choice, NamedToolChoice) else None

    @property
    def reasoning_on(self) -> bool:
        return self.reasoning is not False

    @property
    def effort(self) -> ReasoningEffort | None:
        """The effort level asked for; None when reasoning is off or on at the default."""
        return None if isinstance(self.reasoning, bool) else self.reasoning


@attrs.frozen
class TokenCount:
    """What the optional ``count_tokens`` method answers (``{"input_tokens": 12}``): the
    input tokens an ``infer`` of the same input would read, and report in its usage,
    counted without generating."""

    input_tokens: int = attrs.field(validator=in_range(0))


@attrs.frozen
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int | None = None
    #: Of the input and output tokens, those of audio, where the provider counts them.
    audio_input_tokens: int | None = None
    audio_output_tokens: int | None = None

    def to_dict(self) -> dict[str, int]:
        out = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        for name in ("reasoning_tokens", "audio_input_tokens", "audio_output_tokens"):
            if (value := getattr(self, name)) is not None:
                out[name] = value
        return out


# -- delta builders (plain dicts: a stream item is built once per token) ---------------


def text_delta(text: str) -> dict[str, Any]:
    return {
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
        "finish_reason": None,
    }


def _beside_empty_text(**fields: Any) -> dict[str, Any]:
    """A delta whose message carries ``fields`` (reasoning, a tool call) and no text."""
    return {
        "message": {"role": "assistant", "content": [{"type": "text", "text": ""}], **fields},
        "finish_reason": None,
    }


def reasoning_delta(text: str = "", signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "text", "text": text}
    if signature is not None:
        part["signature"] = signature
    return _beside_empty_text(reasoning=[part])


def tool_call_delta(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str = ""
) -> dict[str, Any]:
    """A tool call's fragment: the first one for an index carries its id and name."""
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    call: dict[str, Any] = {"index": index, "type": "function", "function": function}
    if id is not None:
        call["id"] = id
    return _beside_empty_text(tool_calls=[call])


def media_delta(part: dict[str, Any], text: str = "") -> dict[str, Any]:
    """A piece of the reply's media: ``part`` is a content part on ferrule's wire (an
    ``image_url`` part with a ``data:`` URL, an ``input_audio`` part); ``text`` is text that
    comes with it (an audio piece's transcript). Consecutive audio pieces with no ``id`` or
    the same one are one sound: their base64 ``data`` is joined as bytes, their
    ``transcript`` as text."""
    return {
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "media": [part],
        },
        "finish_reason": None,
    }


def finish(
    reason: FinishReason, usage: Usage | None = None, *, stop_sequence: str | None = None
) -> dict[str, Any]:
    """The last item; ``stop_sequence``: the stop string that ended the reply, if known."""
    item: dict[str, Any] = {
        "message": {"role": "assistant", "content": [{"type": "text", "text": ""}]},
        "finish_reason": reason,
    }
    if usage is not None:
        item["usage"] = usage.to_dict()
    if stop_sequence is not None:
        item["stop_sequence"] = stop_sequence
    return item


# -- folding a stream back into a message -------------------------------------------


@attrs.define
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@attrs.define
class MessageAccumulator:
    """Folds ``infer`` items into one assistant `Message`, a finish reason and usage.

    Tool-call arguments arrive as JSON fragments keyed by index; `message` parses them.
    Invalid JSON raises `InvalidToolCallError` naming the call, rather than guessing.
    """

    text: list[str] = attrs.Factory(list)
    reasoning: list[ReasoningPart] = attrs.Factory(list)
    calls: dict[int, _PendingCall] = attrs.Factory(dict)
    media: list[dict[str, Any]] = attrs.Factory(list)
    finish_reason: str | None = None
    usage: dict[str, int] | None = None

    def add(self, item: dict[str, Any]) -> None:
        message = item["message"]
        for part in message.get("content", ()):
            if part.get("type") == "text" and part["text"]:
                self.text.append(part["text"])
        for part in message.get("reasoning", ()):
            self._add_reasoning(part.get("text", ""), part.get("signature"))
        for call in message.get("tool_calls", ()):
            pending = self.calls.setdefault(call.get("index", len(self.calls)), _PendingCall())
            pending.id = call.get("id") or pending.id
            function = call.get("function", {})
            pending.name = function.get("name") or pending.name
            pending.arguments += function.get("arguments", "")
        for part in message.get("media", ()):
            self._add_media(part)
        if item.get("finish_reason") is not None:
            self.finish_reason = item["finish_reason"]
        if item.get("usage") is not None:
            self.usage = item["usage"]

    def _add_reasoning(self, text: str, signature: str | None) -> None:
        # Consecutive reasoning deltas form one part; a signature closes the part it ends.
        if self.reasoning and self.reasoning[-1].signature is None:
            last = self.reasoning[-1]
            self.reasoning[-1] = ReasoningPart(last.text + text, signature)
        elif text or signature is not None:
            self.reasoning.append(ReasoningPart(text, signature))

    def _add_media(self, part: dict[str, Any]) -> None:
        audio = part.get("input_audio") if part.get("type") == "input_audio" else None
        last = self.media[-1].get("input_audio") if self.media else None
        if (
            isinstance(audio, dict)
            and isinstance(last, dict)
            and audio.get("id") in (None, last.get("id"))
        ):
            last["data"] = last.get("data", b"") + _decoded(audio.get("data"))
            if audio.get("transcript"):
                last["transcript"] = last.get("transcript", "") + audio["transcript"]
            for key in ("format", "expires_at"):
                if audio.get(key) is not None:
                    last[key] = audio[key]
            return
        if isinstance(audio, dict):  # a new sound: its pieces' bytes are joined until done
            audio = {**audio, "data": _decoded(audio.get("data"))}
            self.media.append({**part, "input_audio": audio})
        else:
            self.media.append(part)

    def media_parts(self) -> list[Any]:
        """The reply's media as content parts (structured by their content plugins: an
        `InvalidInputError` naming the plugin to install when none reads them)."""
        parts = []
        for part in self.media:
            audio = part.get("input_audio")
            if isinstance(audio, dict) and isinstance(audio.get("data"), bytes):
                data = base64.b64encode(audio["data"]).decode("ascii")
                part = {**part, "input_audio": {**audio, "data": data}}
            parts.append(converter.structure([part], list[ContentPart])[0])
        return parts

    def tool_calls(self) -> list[ToolCall]:
        out = []
        for index in sorted(self.calls):
            call = self.calls[index]
            try:
                arguments = json.loads(call.arguments) if call.arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise InvalidToolCallError(
                    f"tool call {call.name!r} ({call.id}) has invalid JSON arguments: {exc.msg}",
                    tool_call_id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                ) from None
            out.append(ToolCall(id=call.id, name=call.name, arguments=arguments))
        return out

    def message(self) -> Message:
        text = "".join(self.text)
        return Message(
            role="assistant",
            contents=[text, *self.media_parts()] if self.media else text,
            reasoning=list(self.reasoning),
            tool_calls=self.tool_calls(),
        )


def _decoded(data: Any) -> bytes:
    """A piece of base64 audio as bytes (each piece is whole base64 text of its own)."""
    if not isinstance(data, str) or not data:
        return b""
    try:
        return base64.b64decode(data, validate=True)
    except (ValueError, binascii.Error):
        raise InvalidInputError(
            "the model's audio is not base64 text", field="media.input_audio.data"
        ) from None


from ferrule_kit.errors import InvalidToolCallError  # noqa: E402  (errors imports nothing from here)


def parse_infer_input(data: Any) -> InferInput:
    """Validate a dict into `InferInput` (as the kernel does for ``infer``)."""
    from ferrule_kernel import structure_input

    return structure_input(data, InferInput, target="infer", conv=converter)


def dump(obj: Any) -> Any:
    """Unstructure any sdk data object to its wire shape."""
    return converter.unstructure(obj)
