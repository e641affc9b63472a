"""Loopback kit for the OpenAI Chat Completions wire (OpenAI, xAI, compatible servers).

- `REQUEST_SCHEMA`: the documented request body (OpenAI's ``completion_create_params``, as
  summarised in protocols.md §3.1) as a JSON Schema; unknown top-level fields, unknown
  roles or part types, non-string tool arguments and the like are rejected.
- `validator(path=...)`: that schema plus what a streaming client must send
  (``stream: true``, ``stream_options.include_usage``), and every tool message answering
  an earlier assistant tool call by id. Pass it to `LoopbackServer(validate=...)`.
- `reply(turn)` / `chunks(turn)`: a `ScriptedTurn` as the SSE events the API streams:
  a role chunk, reasoning (``delta.reasoning_content`` by default, as xAI and vLLM send
  it), text, tool calls (the first delta of each with id, type and name, then argument
  fragments), the finish chunk, the usage chunk with ``choices: []`` and ``data: [DONE]``.
- `audio_chunks(transcript, data)` / `audio_completion(transcript, data)`: a reply with
  audio (``modalities: ["text", "audio"]``), streamed (``delta.audio`` pieces, pcm16) or
  whole (``message.audio``, any other format), as OpenAI sends them.
- `error(message, type, code)`: an error body in OpenAI's shape; `error_reply(status,
  message, headers)` a reply of one.
- `stream(pieces, delay=...)`: SSE events (and `Pause` / `Reset` actions) as a reply,
  paced; `WIRE`: the wire as `ferrule_kit.testing.providers.ProviderConformance` scripts it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .conformance import ScriptedTurn
from .loopback import (
    Action,
    Pause,
    RecordedRequest,
    Reply,
    Validator,
    all_of,
    json_schema_validator,
    sse,
)
from .providers import ProviderWire

__all__ = [
    "REQUEST_SCHEMA",
    "WIRE",
    "audio_chunks",
    "audio_completion",
    "chunk",
    "chunks",
    "error",
    "error_reply",
    "reply",
    "stream",
    "validator",
]


def _closed(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    """A JSON object with these properties (``required`` among them) and no other."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return {**schema, "additionalProperties": False}


def _part(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """A content part: ``{"type": kind, kind: body}``."""
    return _closed({"type": {"const": kind}, kind: body}, "type", kind)


_BASE64 = "[A-Za-z0-9+/]+=*"
_TEXT_PART = _closed({"type": {"const": "text"}, "text": {"type": "string"}}, "type", "text")
_IMAGE_PART = _part(
    "image_url",
    _closed(
        {
            "url": {
                "type": "string",
                "pattern": f"^(https?://|data:image/[a-z0-9.+-]+;base64,{_BASE64}$)",
            },
            "detail": {"enum": ["auto", "low", "high"]},
        },
        "url",
    ),
)
_AUDIO_PART = _part(
    "input_audio",
    _closed(
        {"data": {"type": "string", "pattern": f"^{_BASE64}$"}, "format": {"enum": ["wav", "mp3"]}},
        "data",
        "format",
    ),
)
_FILE_PART = _part(
    "file",
    _closed(
        {
            "filename": {"type": "string"},
            "file_data": {
                "type": "string",
                "pattern": f"^data:[a-z]+/[a-z0-9.+-]+;base64,{_BASE64}$",
            },
            "file_id": {"type": "string"},
        }
    ),
)
_TEXT_CONTENT = {"anyOf": [{"type": "string"}, {"type": "array", "items": _TEXT_PART}]}
_USER_CONTENT = {
    "anyOf": [
        {"type": "string"},
        {
            "type": "array",
            "minItems": 1,
            "items": {"anyOf": [_TEXT_PART, _IMAGE_PART, _AUDIO_PART, _FILE_PART]},
        },
    ]
}
_TOOL_CALL = _closed(
    {
        "id": {"type": "string", "minLength": 1},
        "type": {"const": "function"},
        "function": _closed(
            {"name": {"type": "string", "minLength": 1}, "arguments": {"type": "string"}},
            "name",
            "arguments",
        ),
    },
    "id",
    "type",
    "function",
)


def _definition(schema_key: str) -> dict[str, Any]:
    """A named schema (a tool's ``parameters``, a response format's ``schema``)."""
    return _closed(
        {
            "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
            "description": {"type": "string"},
            schema_key: {"type": "object"},
            "strict": {"type": ["boolean", "null"]},
        },
        "name",
    )


_TOOL = _part("function", _definition("parameters"))
_JSON_SCHEMA_FORMAT = _part("json_schema", _definition("schema"))


def _role(role: str, properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return _closed(
        {"role": {"const": role}, "name": {"type": "string"}, **properties}, "role", *required
    )


REQUEST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    **_closed(
        {
            "model": {"type": "string", "minLength": 1},
            "messages": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "oneOf": [
                        _role("system", {"content": _TEXT_CONTENT}, "content"),
                        _role("developer", {"content": _TEXT_CONTENT}, "content"),
                        _role("user", {"content": _USER_CONTENT}, "content"),
                        _role(
                            "assistant",
                            {
                                "content": {"anyOf": [{"type": "null"}, _TEXT_CONTENT]},
                                "tool_calls": {"type": "array", "minItems": 1, "items": _TOOL_CALL},
                                "refusal": {"type": ["string", "null"]},
                                "audio": _closed({"id": {"type": "string", "minLength": 1}}, "id"),
                            },
                        ),
                        _role(
                            "tool",
                            {
                                "content": _TEXT_CONTENT,
                                "tool_call_id": {"type": "string", "minLength": 1},
                            },
                            "content",
                            "tool_call_id",
                        ),
                    ]
                },
            },
            "tools": {"type": "array", "items": _TOOL},
            "tool_choice": {"anyOf": [{"enum": ["none", "auto", "required"]}, {"type": "object"}]},
            "parallel_tool_calls": {"type": "boolean"},
            "stream": {"type": "boolean"},
            "stream_options": _closed(
                {"include_usage": {"type": "boolean"}, "include_obfuscation": {"type": "boolean"}}
            ),
            "max_completion_tokens": {"type": "integer", "minimum": 1},
            "max_tokens": {"type": "integer", "minimum": 1},
            "reasoning_effort": {
                "enum": ["none", "minimal", "low", "medium", "high", "xhigh", "max"]
            },
            "temperature": {"type": "number", "minimum": 0, "maximum": 2},
            "top_p": {"type": "number", "minimum": 0, "maximum": 1},
            "stop": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"type": "string"}, "maxItems": 4},
                ]
            },
            "response_format": {
                "oneOf": [
                    _closed({"type": {"enum": ["text", "json_object"]}}, "type"),
                    _JSON_SCHEMA_FORMAT,
                ]
            },
            "n": {"type": "integer", "minimum": 1},
            "seed": {"type": "integer"},
            "user": {"type": "string"},
            "frequency_penalty": {"type": "number"},
            "presence_penalty": {"type": "number"},
            "logprobs": {"type": "boolean"},
            "top_logprobs": {"type": "integer"},
            "logit_bias": {"type": "object"},
            "metadata": {"type": "object"},
            "store": {"type": "boolean"},
            "service_tier": {"type": "string"},
            "modalities": {
                "type": "array",
                "minItems": 1,
                "items": {"enum": ["text", "audio"]},
                "uniqueItems": True,
            },
            "audio": _closed(
                {
                    "voice": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "object"}]},
                    "format": {"enum": ["wav", "aac", "mp3", "flac", "opus", "pcm16"]},
                },
                "voice",
                "format",
            ),
            "prediction": {"type": "object"},
        },
        "model",
        "messages",
    ),
}


def _streaming_rules(request: RecordedRequest) -> list[str]:
    body = request.json
    if not isinstance(body, dict):
        return []
    problems = []
    spoken = (body.get("audio") or {}).get("format")
    if "audio" in (body.get("modalities") or ()) and spoken is None:
        problems.append("audio: required when modalities has 'audio'")
    if spoken not in (None, "pcm16"):  # OpenAI streams audio as pcm16 only
        if body.get("stream"):
            problems.append(f"stream: audio format {spoken!r} is not streamed (pcm16 is)")
    elif body.get("stream") is not True:
        problems.append("stream: a streaming client sends true")
    elif (body.get("stream_options") or {}).get("include_usage") is not True:
        problems.append("stream_options.include_usage: must be true to get usage")
    if "max_tokens" in body and "max_completion_tokens" in body:
        problems.append("max_tokens and max_completion_tokens are exclusive")
    open_calls: set[str] = set()
    for index, message in enumerate(body.get("messages") or ()):
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or ():
            open_calls.add(call.get("id"))
            try:
                json.loads(call.get("function", {}).get("arguments", ""))
            except ValueError:
                problems.append(f"messages/{index}: tool call arguments are not a JSON string")
        if message.get("role") == "tool" and message.get("tool_call_id") not in open_calls:
            problems.append(
                f"messages/{index}: tool_call_id {message.get('tool_call_id')!r} answers no earlier tool call"
            )
    return problems


def validator(path: str = "/v1/chat/completions") -> Validator:
    return all_of(json_schema_validator(REQUEST_SCHEMA, path=path), _streaming_rules)


# -- replies --------------------------------------------------------------------------

AUDIO_ID = "audio_loopback_1"
#: When the loopback's audio replies expire: far ahead, so later turns may name them.
AUDIO_EXPIRES_AT = 4102444800


def audio_completion(
    transcript: str, data: bytes, *, model: str = "m", audio_id: str = AUDIO_ID
) -> Reply:
    """A whole (non-streamed) Chat Completions reply that speaks ``transcript``: its
    ``message.audio`` holds ``data`` as base64, its ``content`` is null, as OpenAI sends."""
    import base64

    body = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 1760000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "audio": {
                        "id": audio_id,
                        "data": base64.b64encode(data).decode("ascii"),
                        "expires_at": AUDIO_EXPIRES_AT,
                        "transcript": transcript,
                    },
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 11,
            "completion_tokens": 9,
            "total_tokens": 20,
            "completion_tokens_details": {"audio_tokens": 8, "reasoning_tokens": 0},
        },
    }
    return Reply.json(body)


def audio_chunks(
    transcript: Sequence[str], data: Sequence[bytes], *, model: str = "m", audio_id: str = AUDIO_ID
) -> list[bytes]:
    """A streamed reply that speaks: the first ``delta.audio`` names the ``id``, then a
    piece per transcript piece and per ``data`` piece (pcm16, each base64 of its own), the
    last with ``expires_at``; then the finish and usage chunks and ``[DONE]``."""
    import base64

    out = [chunk({"role": "assistant", "content": None}, model=model)]
    out.append(chunk({"audio": {"id": audio_id, "transcript": ""}}, model=model))
    out += [chunk({"audio": {"transcript": t}}, model=model) for t in transcript]
    out += [
        chunk({"audio": {"data": base64.b64encode(d).decode("ascii")}}, model=model) for d in data
    ]
    out.append(chunk({"audio": {"expires_at": AUDIO_EXPIRES_AT}}, model=model))
    out.append(chunk({}, "stop", model=model))
    usage = {"prompt_tokens": 11, "completion_tokens": 9, "total_tokens": 20}
    return out + _usage_and_done(usage, model)


def chunk(
    delta: dict[str, Any] | None = None,
    finish_reason: str | None = None,
    *,
    model: str = "m",
    **extra: Any,
) -> bytes:
    body = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "created": 1760000000,
        "model": model,
        "choices": [
            {"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": None,
        **extra,
    }
    return sse(body)


def _usage_and_done(usage: dict[str, Any], model: str) -> list[bytes]:
    """A stream's last events: the chunk with no choices that carries the usage, then
    ``[DONE]``."""
    last = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "created": 1760000000,
        "model": model,
        "choices": [],
        "usage": usage,
    }
    return [sse(last), sse("[DONE]")]


def _fragments(text: str, parts: int) -> list[str]:
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def chunks(
    turn: ScriptedTurn,
    *,
    model: str = "m",
    reasoning_field: str = "reasoning_content",
    usage: dict[str, Any] | None = None,
    argument_fragments: int = 3,
) -> list[bytes]:
    """The SSE events for ``turn`` (see the module docstring)."""
    out = [chunk({"role": "assistant", "content": ""}, model=model)]
    out += [chunk({reasoning_field: r}, model=model) for r in turn.reasoning]
    out += [chunk({"content": t}, model=model) for t in turn.text]
    for index, call in enumerate(turn.tool_calls):
        first = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        out.append(chunk({"tool_calls": [first]}, model=model))
        arguments = (
            call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        )
        for piece in _fragments(arguments, argument_fragments):
            out.append(
                chunk(
                    {"tool_calls": [{"index": index, "function": {"arguments": piece}}]},
                    model=model,
                )
            )
    out.append(chunk({}, turn.finish_reason, model=model))
    if usage is None:
        output = len(turn.text) + len(turn.reasoning) + len(turn.tool_calls) or 1
        usage = {
            "prompt_tokens": 11,
            "completion_tokens": output,
            "total_tokens": 11 + output,
            "completion_tokens_details": {"reasoning_tokens": len(turn.reasoning)},
        }
    return out + _usage_and_done(usage, model)


def stream(pieces: Iterable[Action], *, delay: float = 0.0) -> Reply:
    """SSE events (and `Pause` / `Reset` actions) as a streamed `Reply`, ``delay`` seconds
    between them."""
    body: list[Action] = []
    for piece in pieces:
        if body and delay:
            body.append(Pause(delay))
        body.append(piece)
    return Reply.sse(body)


def reply(turn: ScriptedTurn, **kw: Any) -> Reply:
    """`chunks` as a streamed `Reply`, paced by ``turn.chunk_delay``."""
    return stream(chunks(turn, **kw), delay=turn.chunk_delay)


def error(
    message: str,
    type: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def error_reply(status: int, message: str, headers: Mapping[str, str] | None = None) -> Reply:
    """An error reply of ``status`` saying ``message``, its type as OpenAI types it."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return Reply.json(error(message, kind), status, headers)


def _text_pieces(texts: Sequence[str]) -> list[bytes]:
    return chunks(ScriptedTurn(text=tuple(texts)))


#: The Chat Completions wire for `ferrule_kit.testing.providers.ProviderConformance`: a role
#: chunk, a chunk a text, then the finish and usage chunks and ``[DONE]``.
WIRE = ProviderWire(
    pieces=_text_pieces,
    stream=stream,
    error=error_reply,
    not_json=b"data: {not json\n\n",
    opening=1,
)
