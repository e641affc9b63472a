"""OpenAI's Responses API, client side: the ``POST /responses`` body for an ``infer`` input
(`build_request`) and the translation of its reply, streamed (`StreamTranslator`, fed
one SSE event at a time) or whole (`response_items`), into the LM contract's items.

Messages become input items: leading system messages the ``instructions``, later ones
``developer`` messages; a user message one ``message`` item (``input_text``,
``input_image``, ``input_file`` parts); an assistant message its ``reasoning`` items, one
``message`` item of its text, then one ``function_call`` item per call; a tool message a
``function_call_output``.

A reasoning item travels in ferrule as a `ReasoningPart`: its summary as the text, and its
id and ``encrypted_content`` as the part's signature (`reasoning_signature`), so the item
goes back to the API as it came when the conversation continues. The API keeps nothing
for us (``store`` is false unless asked): the encrypted content is how a reasoning model
keeps its reasoning across the turns of a tool loop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message, ReasoningPart, TextPart
from ferrule_kit.errors import (
    ModelError,
    ProviderProtocolError,
    StreamInterruptedError,
    UnsupportedContentError,
)
from ferrule_kit.models.chat_completions import Dialect, encode_part, stream_error
from ferrule_kit.models.lm import (
    ANY_JSON_OBJECT,
    FinishReason,
    InferInput,
    NamedToolChoice,
    Usage,
    finish,
    reasoning_delta,
    text_delta,
    tool_call_delta,
)

PROVIDER = "openai"
_SIGNATURE_TAG = "openai-responses"
_SERVER_ITEM_TAG = "openai-responses-server-item"
#: The output items of the tools OpenAI runs (a provider tool's work): kept in the run's
#: messages as reasoning parts with no text, their item as the signature, and not sent
#: back (with ``store`` false OpenAI finds no item by its id; the reply's text says what
#: they found).
SERVER_ITEMS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
    }
)


def reasoning_signature(item_id: str, encrypted_content: str | None) -> str:
    """The `ReasoningPart.signature` of a reasoning item: what sending it back needs."""
    return json.dumps(
        {"format": _SIGNATURE_TAG, "id": item_id, "encrypted_content": encrypted_content},
        separators=(",", ":"),
    )


def _reasoning_item(part: ReasoningPart) -> dict[str, Any] | None:
    """The input item of a reasoning part of an earlier turn; None for one that came from
    another provider (its signature means nothing to OpenAI, so it is not sent)."""
    if part.signature is None:
        return None
    try:
        data = json.loads(part.signature)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != _SIGNATURE_TAG:
        return None  # another provider's, or a server tool's item (`SERVER_ITEMS`)
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": data["id"],
        "summary": [{"type": "summary_text", "text": part.text}] if part.text else [],
    }
    if data.get("encrypted_content"):
        item["encrypted_content"] = data["encrypted_content"]
    return item


def _input_part(part: Any, dialect: Dialect, field: str) -> dict[str, Any]:
    """A user content part in the Responses form, from its Chat Completions form (the
    content plugins' encoding, checked by the provider's `ContentPolicy`)."""
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    encoded = encode_part(part, dialect, field)
    kind = encoded.get("type")
    if kind == "image_url":
        image = encoded["image_url"]
        out = {"type": "input_image", "image_url": image["url"]}
        if image.get("detail"):
            out["detail"] = image["detail"]
        return out
    if kind == "file":
        return {"type": "input_file", **encoded["file"]}
    if kind == "text":
        return {"type": "input_text", "text": encoded["text"]}
    raise UnsupportedContentError(
        f"OpenAI's Responses API takes no {kind!r} content (text, images and files only)",
        field=field,
    )


def _arguments(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def input_items(messages: list[Message], dialect: Dialect) -> tuple[str | None, list[Any]]:
    """(instructions, input items) for a conversation."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        where = f"$.messages[{index}]"
        if message.role == "system":
            if any(not isinstance(p, TextPart) for p in message.contents):
                raise InvalidInputError(
                    "a system message holds text only", field=f"{where}.content"
                )
            if not items:
                instructions.append(message.text)
            else:
                items.append({"type": "message", "role": "developer", "content": message.text})
        elif message.role == "tool":
            if not message.tool_call_id:
                raise InvalidInputError(
                    "a tool message needs the id of the call it answers",
                    field=f"{where}.tool_call_id",
                )
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.text,
                }
            )
        elif message.role == "assistant":
            items.extend(
                item for part in message.reasoning if (item := _reasoning_item(part)) is not None
            )
            if message.text:
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": message.text}],
                    }
                )
            items.extend(
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": _arguments(call.arguments),
                }
                for call in message.tool_calls
            )
        else:
            items.append(
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        _input_part(part, dialect, f"{where}.content[{i}]")
                        for i, part in enumerate(message.contents)
                    ],
                }
            )
    return ("\n\n".join(instructions) if instructions else None), items


def _tool_choice(inputs: InferInput) -> Any:
    choice = inputs.tool_choice
    if isinstance(choice, NamedToolChoice):
        return {"type": "function", "name": choice.function.name}
    return choice


@attrs.frozen
class RequestSettings:
    """What the component adds to every request (its attributes, decided at ``define``)."""

    model: str
    dialect: Dialect
    #: A reasoning model: no temperature/top_p; reasoning items kept across turns.
    reasoning_model: bool = False
    store: bool = False
    reasoning_summary: str | None = "auto"
    #: False: a schema is a guide, never ``strict`` (True: strict when the schema allows it).
    strict_output: bool = True
    #: ``text.verbosity`` (``low``, ``medium``, ``high``); None: the model's default.
    verbosity: str | None = None
    #: The provider tools a request may carry, by type; None: any (`check_server_tools`).
    server_tools: frozenset[str] | None = None
    extra_body: dict[str, Any] = attrs.field(factory=dict)


def check_server_tools(tools: list[dict[str, Any]], allowed: frozenset[str] | None) -> None:
    """Refuse a provider tool (``{"type": "web_search_preview"}``...) whose type the host's
    ``allowed`` types leave out (None: any)."""
    for index, tool in enumerate(tools):
        if allowed is not None and tool.get("type") not in allowed:
            raise InvalidInputError(
                f"the host allows no {tool.get('type')} tool here (server_tools: "
                f"{', '.join(sorted(allowed)) or 'none'})",
                field=f"$.provider_tools[{index}].type",
            )


def server_item_signature(item: dict[str, Any]) -> str:
    """The `ReasoningPart.signature` that keeps a server tool's output item."""
    return json.dumps({"format": _SERVER_ITEM_TAG, "item": item}, separators=(",", ":"))


def build_request(inputs: InferInput, settings: RequestSettings) -> dict[str, Any]:
    """The streamed ``POST /responses`` body for ``inputs``. What the API cannot take
    (stop sequences) is refused, naming the field, rather than dropped."""
    if inputs.stop:
        raise InvalidInputError("OpenAI's Responses API takes no stop sequences", field="$.stop")
    instructions, items = input_items(inputs.messages, settings.dialect)
    request: dict[str, Any] = {
        "model": settings.model,
        "input": items,
        "stream": True,
        "store": settings.store,
    }
    if instructions is not None:
        request["instructions"] = instructions
    if inputs.tools or inputs.provider_tools:
        check_server_tools(inputs.provider_tools, settings.server_tools)
        request["tools"] = [
            {
                "type": "function",
                "name": tool.function.name,
                "description": tool.function.description,
                "parameters": tool.function.parameters,
            }
            for tool in inputs.tools
        ] + [dict(tool) for tool in inputs.provider_tools]
    if inputs.tools:
        if inputs.tool_choice != "auto":
            request["tool_choice"] = _tool_choice(inputs)
    if not settings.reasoning_model:
        if inputs.temperature is not None:
            request["temperature"] = inputs.temperature
        if inputs.top_p is not None:
            request["top_p"] = inputs.top_p
    if inputs.max_tokens is not None:
        request["max_output_tokens"] = inputs.max_tokens
    if inputs.reasoning_on or settings.reasoning_model:
        reasoning: dict[str, Any] = {}
        if inputs.effort is not None:
            reasoning["effort"] = inputs.effort
        if settings.reasoning_summary is not None:
            reasoning["summary"] = settings.reasoning_summary
        request["reasoning"] = reasoning
        if not settings.store:  # nothing kept server-side: the reasoning comes back to us
            request["include"] = ["reasoning.encrypted_content"]
    text: dict[str, Any] = {}
    if inputs.output_schema is not None:
        schema = inputs.output_schema
        if schema == ANY_JSON_OBJECT:
            text["format"] = {"type": "json_object"}
        else:
            fmt: dict[str, Any] = {"type": "json_schema", "name": "output", "schema": schema}
            # Strict mode takes only closed schemas (every property required, no others).
            if settings.strict_output and schema.get("additionalProperties") is False:
                fmt["strict"] = True
            text["format"] = fmt
    if settings.verbosity is not None:
        text["verbosity"] = settings.verbosity
    if text:
        request["text"] = text
    request.update(settings.extra_body)
    return request


# -- the reply -------------------------------------------------------------------------


def _usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("output_tokens_details") or {}
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        reasoning_tokens=None if reasoning is None else int(reasoning),
    )


def _finish_reason(response: dict[str, Any], called: bool) -> FinishReason:
    if response.get("status") == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason")
        return "content_filter" if reason == "content_filter" else "length"
    return "tool_calls" if called else "stop"


def response_error(error: Any) -> ModelError:
    """The typed error of a ``response.failed`` response's ``error`` or an ``error`` event."""
    if isinstance(error, dict) and "type" not in error and error.get("code") is not None:
        error = {**error, "type": error["code"]}  # the Responses API names the kind ``code``
    failure = stream_error(PROVIDER, error)
    assert isinstance(failure, ModelError)
    return failure


def _summary_text(item: dict[str, Any]) -> str:
    parts = item.get("summary") or item.get("content") or []
    return "\n\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def response_items(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The LM contract's items for a whole (non-streamed) response object."""
    if response.get("status") == "failed":
        raise response_error(response.get("error") or {"message": "the response failed"})
    calls = 0
    for item in response.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            text = "".join(
                str(p.get("text", ""))
                for p in item.get("content") or []
                if p.get("type") == "output_text"
            )
            if text:
                yield text_delta(text)
        elif kind == "reasoning":
            yield reasoning_delta(
                _summary_text(item),
                reasoning_signature(str(item.get("id", "")), item.get("encrypted_content")),
            )
        elif kind in SERVER_ITEMS:
            yield reasoning_delta("", server_item_signature(item))
        elif kind == "function_call":
            yield tool_call_delta(
                calls,
                id=item.get("call_id"),
                name=item.get("name"),
                arguments=str(item.get("arguments") or ""),
            )
            calls += 1
    yield finish(_finish_reason(response, calls > 0), _usage(response.get("usage")))


@attrs.define
class _Call:
    index: int
    streamed: bool = False  # its arguments came as deltas (the done item repeats them)
    announced: bool = False  # its id and name were sent


@attrs.define
class StreamTranslator:
    """Responses stream events -> LM items. Call `feed` per event, then `check_complete`."""

    calls: dict[str, _Call] = attrs.Factory(dict)
    #: Message items whose text came as deltas (their done item repeats it).
    texted: set[str] = attrs.Factory(set)
    reasoning_open: bool = False
    streamed_output: bool = False
    finished: bool = False

    def _call(self, item_id: str) -> _Call:
        if item_id not in self.calls:
            self.calls[item_id] = _Call(len(self.calls))
        return self.calls[item_id]

    def feed(self, data: Any) -> Iterator[dict[str, Any]]:
        if not isinstance(data, dict):
            raise ProviderProtocolError(
                "a Responses stream event is not a JSON object", provider=PROVIDER
            )
        kind = data.get("type")
        if kind == "error":
            raise response_error(data)
        if kind == "response.failed":
            raise response_error((data.get("response") or {}).get("error") or data)
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            self.streamed_output = True
            self.texted.add(str(data.get("item_id")))
            yield text_delta(str(data.get("delta", "")))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self.streamed_output = True
            self.reasoning_open = True
            yield reasoning_delta(str(data.get("delta", "")))
        elif kind == "response.reasoning_summary_part.added" and self.reasoning_open:
            yield reasoning_delta("\n\n")  # the summary's parts read as paragraphs
        elif kind == "response.output_item.added":
            item = data.get("item") or {}
            if item.get("type") == "function_call":
                self.streamed_output = True
                yield from self._announce(item)
        elif kind == "response.function_call_arguments.delta":
            call = self._call(str(data.get("item_id")))
            call.streamed = True
            yield tool_call_delta(call.index, arguments=str(data.get("delta", "")))
        elif kind == "response.output_item.done":
            yield from self._item_done(data.get("item") or {})
        elif kind in ("response.completed", "response.incomplete"):
            response = data.get("response") or {}
            self.finished = True
            if not self.streamed_output:  # a server that sent the response only at the end
                yield from response_items(response)
                return
            yield finish(_finish_reason(response, bool(self.calls)), _usage(response.get("usage")))

    def _announce(self, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
        call = self._call(str(item.get("id") or item.get("call_id")))
        if not call.announced:
            call.announced = True
            yield tool_call_delta(call.index, id=item.get("call_id"), name=item.get("name"))

    def _item_done(self, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
        kind = item.get("type")
        if kind == "reasoning":
            self.streamed_output = True
            # The signature closes the part: the next reasoning item is a part of its own.
            text = "" if self.reasoning_open else _summary_text(item)
            self.reasoning_open = False
            yield reasoning_delta(
                text, reasoning_signature(str(item.get("id", "")), item.get("encrypted_content"))
            )
        elif kind == "function_call":
            self.streamed_output = True
            yield from self._announce(item)
            call = self._call(str(item.get("id") or item.get("call_id")))
            if not call.streamed:
                call.streamed = True
                yield tool_call_delta(call.index, arguments=str(item.get("arguments") or ""))
        elif kind in SERVER_ITEMS:
            self.streamed_output = True
            yield reasoning_delta("", server_item_signature(item))
        elif kind == "message" and str(item.get("id")) not in self.texted:
            # A server that sends a message item whole, with no text deltas.
            self.streamed_output = True
            yield from (i for i in response_items({"output": [item]}) if not i["finish_reason"])

    def check_complete(self) -> None:
        if not self.finished:
            raise StreamInterruptedError(
                "the Responses stream ended before response.completed", provider=PROVIDER
            )
