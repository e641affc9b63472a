"""Anthropic's Messages format, server side: a ``POST /v1/messages`` body translated to
the LM contract's ``infer`` input (`messages_request_from_anthropic`, refusing what it
cannot honour rather than dropping it), and errors in Anthropic's shape
(`anthropic_error_body`). The reply is `anthropic_builder`'s. Pure translation: no HTTP
here (`anthropic_api` serves it).

Blocks map to ferrule's message parts: ``text``; ``image`` (base64 or URL) an image part;
``document`` (a base64 PDF, plain text, or text blocks) a document part; ``tool_use`` a
tool call; each ``tool_result`` a tool message (the user turn's other blocks follow it as
a user message); ``thinking`` reasoning with its ``signature``; ``redacted_thinking``
reasoning whose signature is ``"redacted_thinking:" + data`` (as ferrule-anthropic keeps
it, so a Claude model gets it back whole). ``cache_control`` and ``citations`` on blocks
are accepted and have no effect.

The request's top-level ``cache_control`` (Anthropic's automatic prompt caching) becomes
the LM contract's ``prompt_cache`` and ``speed`` its ``speed``: a backend that has them
(ferrule-anthropic) sends them on, the others change nothing. ``diagnostics`` (a cache
diagnosis against an earlier reply) is accepted and answered with none: nothing here
keeps earlier prompts to compare.
"""

from __future__ import annotations

import base64
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import Reasoning

from .openai_wire import OpenAIError

_TRANSLATED = {
    "model", "max_tokens", "messages", "system", "stop_sequences", "temperature", "top_p",
    "tools", "tool_choice", "thinking", "output_config", "stream", "cache_control", "speed",
}  # fmt: skip

#: Hints with no effect on the reply's content.
_IGNORED = {"metadata", "service_tier", "inference_geo", "diagnostics"}

_OFF_ONLY: dict[str, tuple[Any, ...]] = {
    "top_k": (None,),
    "container": (None,),
    "mcp_servers": (None, []),
    "context_management": (None,),
}

#: The ``count_tokens`` body: a request without the generation's own settings.
COUNT_TOKENS_KEYS = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "cache_control",
        "speed",
    }
)

#: ``cache_control.ttl`` values (Anthropic's default: 5 minutes) and ``speed`` values.
_CACHE_TTLS = ("5m", "1h")
_SPEEDS = ("standard", "fast")

#: How ferrule-anthropic keeps a redacted thinking block as a reasoning part's signature.
REDACTED_PREFIX = "redacted_thinking:"

#: Reasoning efforts of Anthropic's ``output_config.effort`` -> the LM contract's.
_EFFORTS: dict[str, Reasoning] = {
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}

# HTTP status -> Anthropic's error type.
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def anthropic_error_body(error: OpenAIError) -> dict[str, Any]:
    """An error in Anthropic's shape: ``{"type": "error", "error": {"type", "message"}}``."""
    kind = _ERROR_TYPES.get(error.status)
    if kind is None:
        kind = "invalid_request_error" if error.status < 500 else "api_error"
    return {"type": "error", "error": {"type": kind, "message": error.message}}


@attrs.frozen
class MessagesRequest:
    """A Messages request translated to the ``infer`` input of the LM contract."""

    model: str
    inputs: dict[str, Any]
    stream: bool
    #: InferInput field -> the Messages parameter it came from (for error messages).
    renames: dict[str, str]


def _fail(param: str, message: str) -> OpenAIError:
    return OpenAIError(400, f"{param}: {message}", param=param)


def _object(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(param, "expected an object")
    return value


def _array(value: Any, param: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(param, "expected an array")
    return value


def _string(value: Any, param: str) -> str:
    if not isinstance(value, str):
        raise _fail(param, "expected a string")
    return value


def messages_request_from_anthropic(body: Any, *, counting: bool = False) -> MessagesRequest:
    """Translate a Messages request body (``counting``: a ``count_tokens`` body, with no
    ``max_tokens``); unsupported options are refused (`OpenAIError`, rendered in
    Anthropic's shape by the route) rather than dropped."""
    if not isinstance(body, dict):
        raise OpenAIError(400, "the request body must be a JSON object")
    known = COUNT_TOKENS_KEYS if counting else _TRANSLATED | _IGNORED | set(_OFF_ONLY)
    for key in body:
        if key not in known:
            raise _fail(key, "Extra inputs are not permitted")
    for key, allowed in _OFF_ONLY.items():
        if key in body and body[key] not in allowed:
            raise _fail(key, "not supported by ferrule serve")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _fail("model", "a model id (string) is required")
    stream = body.get("stream") or False
    if not isinstance(stream, bool):
        raise _fail("stream", "expected a boolean")

    inputs: dict[str, Any] = {"messages": _messages(body.get("system"), body.get("messages"))}
    renames = {
        "max_tokens": "max_tokens",
        "stop": "stop_sequences",
        "output_schema": "output_config",
    }
    if not counting:
        max_tokens = body.get("max_tokens")
        if max_tokens is None:
            raise _fail("max_tokens", "Field required")
        inputs["max_tokens"] = max_tokens
    tools = [_tool(t, f"tools[{i}]") for i, t in enumerate(_array(body.get("tools"), "tools"))]
    choice = _tool_choice(body.get("tool_choice"))
    if tools and choice != "none":  # "none": the model sees no tools
        inputs["tools"] = tools
        inputs["tool_choice"] = choice
    elif choice not in ("auto", "none"):
        raise _fail("tool_choice", "forces a tool call, but no tools were given")
    for key in ("temperature", "top_p"):
        if body.get(key) is not None:
            inputs[key] = body[key]
    stop = body.get("stop_sequences")
    if stop is not None:
        inputs["stop"] = stop
    output_config = body.get("output_config")
    effort: str | None = None
    if output_config is not None:
        output_config = _object(output_config, "output_config")
        effort = output_config.get("effort")
        if effort is not None and effort not in _EFFORTS:
            raise _fail("output_config.effort", f"expected one of {', '.join(_EFFORTS)}")
        schema = _output_schema(output_config.get("format"))
        if schema is not None:
            inputs["output_schema"] = schema
    reasoning = _reasoning(body.get("thinking"), effort)
    if reasoning is not False:
        inputs["reasoning"] = reasoning
    prompt_cache = _prompt_cache(body.get("cache_control"))
    if prompt_cache is not None:
        inputs["prompt_cache"] = prompt_cache
        renames["prompt_cache"] = "cache_control"
    speed = body.get("speed")
    if speed is not None:
        if speed not in _SPEEDS:
            raise _fail("speed", f"expected one of {', '.join(_SPEEDS)}, or null")
        inputs["speed"] = speed
    _check_diagnostics(body.get("diagnostics"))
    return MessagesRequest(model, inputs, stream, renames)


def _prompt_cache(cache_control: Any) -> dict[str, Any] | None:
    """The top-level ``cache_control`` (``{"type": "ephemeral", "ttl"?}``, or null) as the
    LM contract's ``prompt_cache``."""
    if cache_control is None:
        return None
    cache_control = _object(cache_control, "cache_control")
    if cache_control.get("type") != "ephemeral":
        raise _fail("cache_control.type", "expected 'ephemeral'")
    for key in cache_control:
        if key not in ("type", "ttl"):
            raise _fail(f"cache_control.{key}", "Extra inputs are not permitted")
    ttl = cache_control.get("ttl", _CACHE_TTLS[0])
    if ttl not in _CACHE_TTLS:
        raise _fail("cache_control.ttl", f"expected one of {', '.join(_CACHE_TTLS)}")
    return {"ttl": ttl}


def _check_diagnostics(diagnostics: Any) -> None:
    """``diagnostics``: null, or ``{"previous_message_id": "msg_..." | null}``."""
    if diagnostics is None:
        return
    for key, value in _object(diagnostics, "diagnostics").items():
        if key != "previous_message_id":
            raise _fail(f"diagnostics.{key}", "Extra inputs are not permitted")
        if value is not None:
            _string(value, "diagnostics.previous_message_id")


def _reasoning(thinking: Any, effort: str | None) -> Reasoning:
    """``thinking`` as the LM contract's reasoning switch: ``enabled`` and ``adaptive`` on
    (at ``output_config.effort``, else the backend's own depth), ``disabled`` off."""
    if thinking is None:
        return False
    kind = _object(thinking, "thinking").get("type")
    if kind == "disabled":
        return False
    if kind not in ("enabled", "adaptive"):
        raise _fail("thinking.type", "expected 'enabled', 'adaptive' or 'disabled'")
    return _EFFORTS[effort] if effort is not None else True


def _output_schema(fmt: Any) -> dict[str, Any] | None:
    if fmt is None:
        return None
    fmt = _object(fmt, "output_config.format")
    if fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
        raise _fail("output_config.format", "expected {'type': 'json_schema', 'schema': {...}}")
    return dict(fmt["schema"])


def _tool(tool: Any, param: str) -> dict[str, Any]:
    tool = _object(tool, param)
    if tool.get("type") not in (None, "custom"):
        raise _fail(
            f"{param}.type",
            f"server tools ({tool.get('type')!r}) are not supported by ferrule serve: "
            "send custom tools (name, description, input_schema)",
        )
    function: dict[str, Any] = {"name": _string(tool.get("name"), f"{param}.name")}
    if tool.get("description") is not None:
        function["description"] = _string(tool["description"], f"{param}.description")
    if tool.get("input_schema") is not None:
        function["parameters"] = _object(tool["input_schema"], f"{param}.input_schema")
    return {"type": "function", "function": function}


def _tool_choice(choice: Any) -> Any:
    """Anthropic's ``tool_choice`` as the LM contract's (``any`` is ``required``);
    ``disable_parallel_tool_use`` is a hint."""
    if choice is None:
        return "auto"
    kind = _object(choice, "tool_choice").get("type")
    if kind in ("auto", "none"):
        return kind
    if kind == "any":
        return "required"
    if kind == "tool":
        name = _string(choice.get("name"), "tool_choice.name")
        return {"type": "function", "function": {"name": name}}
    raise _fail("tool_choice.type", "expected 'auto', 'any', 'tool' or 'none'")


# -- messages ------------------------------------------------------------------------


def _messages(system: Any, messages: Any) -> list[dict[str, Any]]:
    out: list[tuple[dict[str, Any], str]] = []  # each message and where it came from
    if system is not None:
        if isinstance(system, str):
            text = system
        else:
            blocks = _array(system, "system")
            text = "\n\n".join(
                _string(_object(b, f"system[{i}]").get("text"), f"system[{i}].text")
                for i, b in enumerate(blocks)
            )
        if text:
            out.append(({"role": "system", "content": text}, "system"))
    given = _array(messages, "messages")
    if not given:
        raise _fail("messages", "at least one message is required")
    for index, message in enumerate(given):
        where = f"messages[{index}]"
        message = _object(message, where)
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise _fail(f"{where}.role", "expected 'user' or 'assistant'")
        content = message.get("content")
        blocks = (
            [{"type": "text", "text": content}]
            if isinstance(content, str)
            else _array(content, f"{where}.content")
        )
        if role == "assistant":
            out.append((_assistant(blocks, where), where))
        elif not blocks:
            raise _fail(f"{where}.content", "a user message needs content")
        else:
            out.extend(_user(blocks, where))
    for message, where in out:  # checked here, so that an error names the request's param
        try:
            Message.from_dict(message)
        except InvalidInputError as exc:
            errors = exc.errors or [{"path": "$", "message": exc.message}]
            raise _fail(where, errors[0]["message"]) from None
    return [message for message, _ in out]


def _assistant(blocks: list[Any], where: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": []}
    for index, block in enumerate(blocks):
        param = f"{where}.content[{index}]"
        block = _object(block, param)
        kind = block.get("type")
        if kind == "text":
            message["content"].append({"type": "text", "text": _string(block.get("text"), param)})
        elif kind == "thinking":
            part: dict[str, Any] = {
                "type": "text",
                "text": _string(block.get("thinking"), f"{param}.thinking"),
            }
            if block.get("signature"):  # a local model's thinking has none
                part["signature"] = _string(block["signature"], f"{param}.signature")
            message.setdefault("reasoning", []).append(part)
        elif kind == "redacted_thinking":
            data = _string(block.get("data"), f"{param}.data")
            message.setdefault("reasoning", []).append(
                {"type": "text", "text": "", "signature": REDACTED_PREFIX + data}
            )
        elif kind == "tool_use":
            arguments = block.get("input", {})
            message.setdefault("tool_calls", []).append(
                {
                    "id": _string(block.get("id"), f"{param}.id"),
                    "type": "function",
                    "function": {
                        "name": _string(block.get("name"), f"{param}.name"),
                        "arguments": _object(arguments, f"{param}.input"),
                    },
                }
            )
        else:
            raise _fail(f"{param}.type", f"assistant blocks of type {kind!r} are not supported")
    return message


def _user(blocks: list[Any], where: str) -> list[tuple[dict[str, Any], str]]:
    """A user turn: its tool results first, each a tool message, then the rest."""
    results: list[tuple[dict[str, Any], str]] = []
    parts: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        param = f"{where}.content[{index}]"
        block = _object(block, param)
        if block.get("type") == "tool_result":
            content = block.get("content")
            if content is None:
                content = ""
            elif not isinstance(content, str):
                content = [
                    _part(_object(b, f"{param}.content[{i}]"), f"{param}.content[{i}]")
                    for i, b in enumerate(_array(content, f"{param}.content"))
                ]
            tool_use_id = _string(block.get("tool_use_id"), f"{param}.tool_use_id")
            results.append(
                ({"role": "tool", "tool_call_id": tool_use_id, "content": content}, param)
            )
        else:
            parts.append(_part(block, param))
    if parts:
        results.append(({"role": "user", "content": parts}, where))
    return results


def _part(block: dict[str, Any], param: str) -> dict[str, Any]:
    """A user block (or a tool result's) as a ferrule part."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": _string(block.get("text"), f"{param}.text")}
    if kind == "image":
        source = _object(block.get("source"), f"{param}.source")
        if source.get("type") == "base64":
            media = _string(source.get("media_type"), f"{param}.source.media_type")
            data = _string(source.get("data"), f"{param}.source.data")
            return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{data}"}}
        if source.get("type") == "url":
            url = _string(source.get("url"), f"{param}.source.url")
            return {"type": "image_url", "image_url": {"url": url}}
        raise _fail(f"{param}.source.type", "expected 'base64' or 'url' (files are not stored)")
    if kind == "document":
        return _document(block, param)
    raise _fail(f"{param}.type", f"content blocks of type {kind!r} are not supported")


def _document(block: dict[str, Any], param: str) -> dict[str, Any]:
    source = _object(block.get("source"), f"{param}.source")
    kind = source.get("type")
    if kind == "base64":
        media = _string(source.get("media_type"), f"{param}.source.media_type")
        data_url = f"data:{media};base64,{_string(source.get('data'), f'{param}.source.data')}"
    elif kind == "text":
        text = _string(source.get("data"), f"{param}.source.data")
        encoded = base64.b64encode(text.encode()).decode("ascii")
        data_url = f"data:text/plain;base64,{encoded}"
    elif kind == "content":
        content = source.get("content")
        if isinstance(content, str):
            return {"type": "text", "text": content}
        texts = [
            _string(_object(b, f"{param}.source.content[{i}]").get("text"), f"{param}.source")
            for i, b in enumerate(_array(content, f"{param}.source.content"))
        ]
        return {"type": "text", "text": "\n\n".join(texts)}
    else:
        raise _fail(
            f"{param}.source.type",
            "expected 'base64', 'text' or 'content' (documents are not fetched by ferrule serve)",
        )
    file: dict[str, Any] = {"file_data": data_url}
    if isinstance(block.get("title"), str):
        file["filename"] = block["title"]
    return {"type": "file", "file": file}
