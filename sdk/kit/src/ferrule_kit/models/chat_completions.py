"""The OpenAI Chat Completions dialect, shared by every backend that speaks it.

OpenAI, xAI and the OpenAI-compatible servers (vLLM, TGI, Ollama, llama.cpp's server,
another ``ferrule serve``) share one wire format, so its translator lives here once and
each plugin adds only what differs: its auth headers, base URL, content policy and the
rules of its models (see `Dialect` and `ModelRules`). Plugin-to-plugin dependencies are
avoided on purpose: ``ferrule-xai`` (or a third party's DeepSeek plugin) reuses this
module without installing, and registering, the OpenAI plugin.

- `build_request` turns `InferInput` into the request JSON (``stream: true`` with
  ``stream_options.include_usage``), refusing before any request what the provider or
  the model does not accept (`UnsupportedContentError`, `InvalidInputError` naming the
  field). Parts other than text are encoded by their content plugins through the
  part-type registry (`ferrule_kit.content.parts`), after the dialect's `ContentPolicy` is checked.
- `ChatCompletionsModel` is the language-model component: ``infer`` sends the request
  through `ferrule_kit.network.http.HTTPClient` and translates the chunks into `ferrule_kit.models.lm` deltas:
  ``delta.content`` -> text, ``delta.reasoning_content`` / ``delta.reasoning`` (xAI
  grok-3-mini, vLLM, Ollama, llama.cpp) -> reasoning, ``delta.tool_calls`` fragments keyed
  by ``index`` -> tool-call deltas (ids kept; a server that omits one gets a generated id),
  ``delta.audio`` pieces -> audio (`ferrule_kit.models.chat_audio`, which also sends a
  request for audio in a format OpenAI does not stream without streaming),
  ``finish_reason`` and the trailing usage chunk -> the final item. A ``data: {"error":
  ...}`` event or a stream that ends before ``[DONE]`` and before any finish reason ends
  the stream with one typed error.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from ferrule_kernel import InvalidInputError

from ferrule_kit.content.messages import Message, TextPart, converter
from ferrule_kit.content.parts import registry
from ferrule_kit.content.policy import Accepts, ContentPolicy
from ferrule_kit.errors import ProviderProtocolError, StreamInterruptedError
from ferrule_kit.network.http import (
    ErrorParser,
    HTTPClient,
    ProviderErrorInfo,
    parse_error_body,
    provider_error,
)

from .chat_audio import STREAMED_FORMAT, assistant_audio, audio_format, audio_item, whole_reply
from .lm import (
    ANY_JSON_OBJECT,
    FinishReason,
    InferInput,
    Usage,
    finish,
    reasoning_delta,
    text_delta,
    tool_call_delta,
)

if TYPE_CHECKING:
    from .providerspec import ProviderAttributes

__all__ = [
    "MEDIA_LIMITS",
    "ChatCompletionsModel",
    "Dialect",
    "ModelRules",
    "build_request",
    "encode_part",
]

MiB = 1024 * 1024
_EFFORTS = ("minimal", "low", "medium", "high")

#: OpenAI's limits on images and audio (decoded bytes), which compatible servers share.
MEDIA_LIMITS: dict[str, Accepts] = {
    "image": Accepts(
        formats=frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"}),
        max_bytes=20 * MiB,
    ),
    "audio": Accepts(formats=frozenset({"wav", "mp3"}), max_bytes=25 * MiB),
}


@attrs.frozen
class Dialect:
    """What a provider's Chat Completions endpoint accepts: besides text, the parts its
    `ContentPolicy` (dialect ``openai`` or ``openai-compatible``) lets through."""

    provider: str
    content: ContentPolicy
    #: ``max_completion_tokens`` (OpenAI; counts reasoning tokens) or ``max_tokens``
    #: (the field OpenAI-compatible servers and xAI have long accepted).
    max_tokens_field: str = "max_completion_tokens"


@attrs.frozen
class ModelRules:
    """What one model accepts (decided by the plugin from the model id)."""

    #: A reasoning model: no temperature/top_p, no stop, ``developer`` system role.
    reasoning_model: bool = False
    #: ``reasoning_effort`` values the model takes; empty: never send the field.
    efforts: tuple[str, ...] = ()
    system_role: str = "system"
    sampling: bool = True
    stop: bool = True
    #: Sent when reasoning is asked for with no effort (None: the model's own default).
    #: Chat Completions has no other on-switch, so a compatible server (vLLM, another
    #: ``ferrule serve``) learns of ``reasoning=True`` only through this.
    default_effort: str | None = None


def encode_part(part: Any, dialect: Dialect, field: str = "content") -> Any:
    """A content part in Chat Completions form: text here, any other part by its content
    plugin once the provider's `ContentPolicy` lets it through (`UnsupportedContentError`
    naming ``field`` otherwise)."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    return registry.encode(part, dialect.content, field)


def _content(message: Message, dialect: Dialect, where: str) -> str | list[dict[str, Any]]:
    parts = message.contents
    if all(isinstance(p, TextPart) for p in parts):
        return message.text  # a plain string: every compatible server takes it
    return [encode_part(p, dialect, f"{where}.content[{i}]") for i, p in enumerate(parts)]


def _message(message: Message, dialect: Dialect, rules: ModelRules, where: str) -> dict[str, Any]:
    role = message.role
    if role == "system":
        if any(not isinstance(p, TextPart) for p in message.contents):
            raise InvalidInputError("a system message holds text only", field=f"{where}.content")
        return {"role": rules.system_role, "content": message.text}
    if role == "tool":
        if not message.tool_call_id:
            raise InvalidInputError(
                "a tool message needs the id of the call it answers", field=f"{where}.tool_call_id"
            )
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text}
    if role == "assistant":
        out: dict[str, Any] = {"role": "assistant"}
        text = message.text
        if message.tool_calls:
            out["content"] = text or None
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.arguments
                        if isinstance(call.arguments, str)
                        else json.dumps(call.arguments),
                    },
                }
                for call in message.tool_calls
            ]
        else:
            out["content"] = text
        audio = assistant_audio(message)
        if audio is not None:  # OpenAI's audio reply, named by its id (its text is in it)
            out["content"], out["audio"] = "", audio
        return (
            out  # reasoning of earlier turns is not sent back: Chat Completions has no field for it
        )
    return {"role": "user", "content": _content(message, dialect, where)}


def _effort(requested: str, allowed: tuple[str, ...]) -> str:
    """The least allowed effort at or above ``requested`` (else the highest allowed)."""
    rank = _EFFORTS.index(requested)
    for value in _EFFORTS[rank:]:
        if value in allowed:
            return value
    return max(allowed, key=lambda v: _EFFORTS.index(v) if v in _EFFORTS else -1)


def build_request(
    model: str,
    inputs: InferInput,
    dialect: Dialect,
    rules: ModelRules,
    extra_body: Mapping[str, Any] | None = None,
    *,
    strict_output: bool = True,
) -> dict[str, Any]:
    """The streaming Chat Completions request for ``inputs``. ``strict_output`` False sends
    a schema as a guide (``strict: false``) rather than as strict when it is closed."""
    request: dict[str, Any] = {
        "model": model,
        "messages": [
            _message(m, dialect, rules, f"$.messages[{i}]") for i, m in enumerate(inputs.messages)
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if inputs.tools:
        request["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.function.name,
                    "description": t.function.description,
                    "parameters": t.function.parameters,
                },
            }
            for t in inputs.tools
        ]
        if inputs.tool_choice != "auto":
            request["tool_choice"] = converter.unstructure(inputs.tool_choice)
    if rules.sampling:
        if inputs.temperature is not None:
            request["temperature"] = inputs.temperature
        if inputs.top_p is not None:
            request["top_p"] = inputs.top_p
    if inputs.max_tokens is not None:
        request[dialect.max_tokens_field] = inputs.max_tokens
    if inputs.stop:
        if not rules.stop:
            raise InvalidInputError(
                f"{dialect.provider} model {model!r} is a reasoning model and takes no stop sequences",
                field="$.stop",
            )
        request["stop"] = list(inputs.stop)
    if rules.efforts and inputs.reasoning_on:
        effort = inputs.effort or rules.default_effort
        if effort is not None:
            request["reasoning_effort"] = _effort(effort, rules.efforts)
    if inputs.output_schema is not None:
        schema = inputs.output_schema
        if schema == ANY_JSON_OBJECT:  # JSON mode: what a client's json_object asked for
            request["response_format"] = {"type": "json_object"}
        else:
            json_schema: dict[str, Any] = {"name": "output", "schema": schema}
            if not strict_output:
                json_schema["strict"] = False  # asked for: the schema guides, never binds
            elif schema.get("additionalProperties") is False:
                json_schema["strict"] = True  # the schema is written for strict structured output
            request["response_format"] = {"type": "json_schema", "json_schema": json_schema}
    if extra_body:
        request.update(extra_body)
    return request


_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
}
_FINISH_ALIASES: dict[str, FinishReason] = {
    "function_call": "tool_calls",
    "max_tokens": "length",
    "model_length": "length",
}
# A mid-stream error names no HTTP status; its type says which one it stands for.
_ERROR_TYPE_STATUS = {
    "insufficient_quota": 429,
    "rate_limit_exceeded": 429,
    "requests": 429,
    "tokens": 429,
    "server_error": 500,
    "overloaded_error": 529,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
}


def stream_error(provider: str, error: Any) -> Exception:
    """The typed error for a ``data: {"error": ...}`` event."""
    if isinstance(error, dict):
        kind, code = error.get("type"), error.get("code")
        status = (
            code
            if isinstance(code, int)
            else _ERROR_TYPE_STATUS.get(str(kind)) or _ERROR_TYPE_STATUS.get(str(code))
        )
        info = ProviderErrorInfo(
            message=str(error.get("message") or error),
            code=None if code is None else str(code),
            type=None if kind is None else str(kind),
            quota="insufficient_quota" in (kind, code),
        )
    else:
        status, info = None, ProviderErrorInfo(message=str(error))
    return provider_error(provider, status, info, during="stream")


class ChatCompletionsModel:
    """A language-model component over a Chat Completions endpoint (see the module docstring).

    The plugin supplies the client (auth headers and base URL), the dialect and the
    model's rules. ``close()`` closes the HTTP session.
    """

    def __init__(
        self,
        *,
        model: str,
        client: HTTPClient,
        dialect: Dialect,
        rules: ModelRules,
        extra_body: Mapping[str, Any] | None = None,
        strict_output: bool = True,
    ) -> None:
        self.model = model
        self.client = client
        self.dialect = dialect
        self.rules = rules
        self.extra_body = dict(extra_body or {})
        #: False: a structured-output schema is sent with ``strict: false`` (a guide).
        self.strict_output = strict_output

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.client.base_url!r})"

    async def close(self) -> None:
        await self.client.close()

    async def infer(self, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        request = build_request(
            self.model,
            inputs,
            self.dialect,
            self.rules,
            self.extra_body,
            strict_output=self.strict_output,
        )
        provider = self.dialect.provider
        spoken = audio_format(request)
        if spoken is not None and spoken != STREAMED_FORMAT:
            # OpenAI streams audio as pcm16 only: another format comes in one reply
            del request["stream_options"]
            request["stream"] = False
            body = await self.client.request_json("/chat/completions", request)
            for item in whole_reply(body, spoken, self._finish_reason, _usage):
                yield item
            return
        events = await self.client.open_sse("/chat/completions", request)
        finish_reason: str | None = None
        usage: dict[str, Any] | None = None
        ids: dict[int, str] = {}
        done = False
        try:
            async for event in events:
                if event.data == "[DONE]":
                    done = True
                    break
                chunk = event.json_data(provider)
                if type(chunk) is not dict:
                    raise ProviderProtocolError(
                        f"{provider}: a stream event is not a JSON object: {event.data[:200]!r}",
                        provider=provider,
                        status=None,
                        provider_message=event.data[:200],
                    )
                choices = chunk.get("choices")
                if choices:
                    choice = choices[0]
                    delta = choice.get("delta")
                    if delta:
                        content = delta.get("content")
                        if content:
                            yield text_delta(content)
                        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                        if reasoning:
                            yield reasoning_delta(reasoning)
                        calls = delta.get("tool_calls")
                        if calls:
                            for call in calls:
                                yield self._tool_call(call, ids)
                        if delta.get("audio") and spoken is not None:
                            piece = audio_item(delta["audio"], spoken)
                            if piece is not None:
                                yield piece
                    reason = choice.get("finish_reason")
                    if reason:
                        finish_reason = reason
                elif "error" in chunk:
                    raise stream_error(provider, chunk["error"])
                if chunk.get("usage"):
                    usage = chunk["usage"]
        finally:
            await events.aclose()
        if not done and finish_reason is None:
            raise StreamInterruptedError(
                f"{provider}: the stream ended before the reply was complete",
                provider=provider,
                status=None,
                provider_message="stream ended without [DONE] or a finish_reason",
            )
        yield finish(self._finish_reason(finish_reason, bool(ids)), _usage(usage))

    @staticmethod
    def _tool_call(call: dict[str, Any], ids: dict[int, str]) -> dict[str, Any]:
        index = call.get("index", 0)
        function = call.get("function") or {}
        if index not in ids:
            ids[index] = call.get("id") or f"call_{uuid.uuid4().hex[:24]}"
            return tool_call_delta(
                index,
                id=ids[index],
                name=function.get("name") or "",
                arguments=function.get("arguments") or "",
            )
        return tool_call_delta(index, arguments=function.get("arguments") or "")

    @staticmethod
    def _finish_reason(reason: str | None, had_tool_calls: bool) -> FinishReason:
        mapped = _FINISH.get(reason or "stop") or _FINISH_ALIASES.get(reason or "", "stop")
        if had_tool_calls and mapped == "stop":
            return "tool_calls"  # servers such as Ollama say "stop" after tool calls
        return mapped


def _usage(usage: dict[str, Any] | None) -> Usage:
    if not usage:
        return Usage()  # a server that ignores include_usage: nothing was counted
    details = usage.get("completion_tokens_details") or {}
    reasoning = details.get("reasoning_tokens")
    heard = (usage.get("prompt_tokens_details") or {}).get("audio_tokens")
    said = details.get("audio_tokens")
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        reasoning_tokens=None if reasoning is None else int(reasoning),
        audio_input_tokens=int(heard) if heard else None,
        audio_output_tokens=int(said) if said else None,
    )


def make_client(
    connection: ProviderAttributes,
    *,
    provider: str,
    base_url: str,
    api_key: str | None,
    headers: Mapping[str, str] | None = None,
    parse_error: ErrorParser = parse_error_body,
) -> HTTPClient:
    """The auth piece of a Chat Completions backend: bearer-key headers on an `HTTPClient`
    (with ``connection``'s retry and header settings, as `HTTPClient.for_component`
    takes them)."""
    all_headers = dict(headers or {})
    if api_key:
        all_headers["Authorization"] = f"Bearer {api_key}"
    return HTTPClient.for_component(
        connection,
        provider=provider,
        base_url=base_url,
        headers=all_headers,
        secrets=[api_key] if api_key else [],
        parse_error=parse_error,
    )
