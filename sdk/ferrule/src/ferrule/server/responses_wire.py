"""The OpenAI Responses format, server side: a ``POST /v1/responses`` body translated to
the LM contract's ``infer`` input (`responses_request_from_openai`, refusing what it
cannot honour rather than dropping it); the reply is `responses_builder`'s. Pure
translation: no HTTP here (`responses_api` serves it).

The input items become messages: ``instructions`` a system message first; a ``message``
item (``developer`` is ``system``) one message; ``reasoning``, ``message`` and
``function_call`` items of the assistant in a row one assistant message (its reasoning,
text and tool calls, as a model's turn is); a ``function_call_output`` a tool message.
Reasoning travels as ``reasoning_text`` content, and its provider signature as
``encrypted_content`` (sent when ``include`` asks for ``reasoning.encrypted_content``),
so a client that sends the items back keeps an Anthropic or Gemini model's reasoning.
Nothing is stored: ``previous_response_id``, ``conversation`` and item references are
refused, and the client sends the whole conversation each time (``store`` is accepted,
with no effect).
"""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import ANY_JSON_OBJECT, Reasoning

from .openai_wire import OpenAIError, check_effort, tool_choice_from_openai

_TRANSLATED = {
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "max_output_tokens",
    "temperature",
    "top_p",
    "reasoning",
    "text",
    "stream",
    "include",
}

# Hints with no effect on the reply's content; the response repeats those it has a field for.
_IGNORED = {
    "user",
    "metadata",
    "store",
    "service_tier",
    "parallel_tool_calls",
    "prompt_cache_key",
    "safety_identifier",
    "truncation",
    "stream_options",
    "prompt_cache_retention",
}

_OFF_ONLY: dict[str, tuple[Any, ...]] = {
    "previous_response_id": (None,),
    "conversation": (None,),
    "background": (None, False),
    "prompt": (None,),
    "top_logprobs": (None, 0),
    "max_tool_calls": (None,),
    "context_management": (None,),
}

#: A part's field on the ferrule wire -> its field in a Responses content part, for the
#: ``param`` of an error found in it.
_PART_FIELDS = ((".image_url.url", ".image_url"), (".file.", "."))


@attrs.frozen
class ResponsesRequest:
    """A Responses request translated to the ``infer`` input of the LM contract."""

    model: str
    inputs: dict[str, Any]
    stream: bool
    #: InferInput field -> the Responses parameter it came from (for error ``param``s).
    renames: dict[str, str]
    #: The request's settings as the response object repeats them.
    echo: dict[str, Any]
    #: Send reasoning signatures as ``encrypted_content``.
    encrypted_reasoning: bool


def responses_request_from_openai(body: Any) -> ResponsesRequest:
    """Translate a Responses request body; unsupported options are refused
    (`OpenAIError`) rather than silently dropped."""
    if not isinstance(body, dict):
        raise OpenAIError(400, "the request body must be a JSON object")
    for key in body:
        if key not in _TRANSLATED and key not in _IGNORED and key not in _OFF_ONLY:
            raise OpenAIError(400, f"Unrecognized request argument supplied: {key}", param=key)
    for key, allowed in _OFF_ONLY.items():
        if key in body and body[key] not in allowed:
            reason = " (nothing is stored: send the whole conversation as input)"
            stored = key in ("previous_response_id", "conversation")
            raise OpenAIError(
                400, f"{key} is not supported by ferrule serve{reason if stored else ''}", param=key
            )
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise OpenAIError(400, "model: a model id (string) is required", param="model")
    stream = body.get("stream") or False
    if not isinstance(stream, bool):
        raise OpenAIError(400, "stream: expected boolean", param="stream")
    include = body.get("include") or []
    if not isinstance(include, list) or not all(isinstance(i, str) for i in include):
        raise OpenAIError(400, "include: expected an array of strings", param="include")

    messages = _messages(body.get("input"), body.get("instructions"))
    inputs: dict[str, Any] = {"messages": messages}
    renames = {"messages": "input", "max_tokens": "max_output_tokens", "output_schema": "text"}
    given_choice = body.get("tool_choice")
    tool_choice = tool_choice_from_openai(given_choice, "tool_choice")
    tools = [_tool(t, i) for i, t in enumerate(_array(body.get("tools"), "tools"))]
    if tools and tool_choice != "none":  # "none": the model sees no tools
        inputs["tools"] = [
            {"type": "function", "function": {k: v for k, v in t.items() if k != "type"}}
            for t in tools
        ]
        if tool_choice is not None:
            inputs["tool_choice"] = tool_choice
    elif tool_choice not in (None, "auto", "none"):
        raise OpenAIError(
            400, "tool_choice: forces a tool call, but no tools were given", param="tool_choice"
        )
    for key in ("temperature", "top_p"):
        if body.get(key) is not None:
            inputs[key] = body[key]
    if body.get("max_output_tokens") is not None:
        inputs["max_tokens"] = body["max_output_tokens"]
    reasoning = body.get("reasoning")
    effort = _reasoning(reasoning)
    if effort is not False:
        inputs["reasoning"] = effort
    text = body.get("text")
    schema = _output_schema(text)
    if schema is not None:
        inputs["output_schema"] = schema

    echo = {
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "metadata": body.get("metadata") or {},
        "parallel_tool_calls": body.get("parallel_tool_calls") is not False,
        "reasoning": {
            "effort": effort if isinstance(effort, str) else None,
            "summary": reasoning.get("summary") if isinstance(reasoning, dict) else None,
        },
        "temperature": body.get("temperature"),
        "text": text if isinstance(text, dict) else {"format": {"type": "text"}},
        "tool_choice": given_choice or "auto",
        "tools": [
            {"description": None, "strict": given.get("strict", True), **tool}
            for tool, given in zip(tools, body.get("tools") or [], strict=True)
        ],
        "top_p": body.get("top_p"),
        "truncation": body.get("truncation") or "disabled",
        "user": body.get("user"),
    }
    return ResponsesRequest(
        model, inputs, stream, renames, echo, "reasoning.encrypted_content" in include
    )


def _array(value: Any, param: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise OpenAIError(400, f"{param}: expected an array", param=param)
    return value


def _object(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OpenAIError(400, f"{param}: expected an object", param=param)
    return value


def _tool(tool: Any, index: int) -> dict[str, Any]:
    """A function tool, flat as the Responses API has it (``strict`` is dropped)."""
    param = f"tools[{index}]"
    tool = _object(tool, param)
    if tool.get("type") != "function":
        raise OpenAIError(
            400,
            f"{param}.type: only function tools are supported by ferrule serve, got "
            f"{tool.get('type')!r}",
            param=f"{param}.type",
        )
    if not isinstance(tool.get("name"), str):
        raise OpenAIError(400, f"{param}.name: a string is required", param=f"{param}.name")
    out = {"type": "function", "name": tool["name"]}
    if tool.get("description") is not None:
        out["description"] = tool["description"]
    if tool.get("parameters") is not None:
        out["parameters"] = tool["parameters"]
    return out


def _reasoning(reasoning: Any) -> Reasoning:
    """The ``infer`` reasoning switch: off, on at the backend's depth, or an effort level."""
    if reasoning is None:
        return False
    reasoning = _object(reasoning, "reasoning")
    effort = reasoning.get("effort")
    if effort is None:
        return True  # asked for (a summary, say) without a level: the backend's own depth
    if effort == "none":
        return False
    return check_effort(effort, "reasoning.effort")


def _output_schema(text: Any) -> dict[str, Any] | None:
    if text is None:
        return None
    fmt = _object(text, "text").get("format")
    if fmt is None:
        return None
    kind = _object(fmt, "text.format").get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return dict(ANY_JSON_OBJECT)
    if kind == "json_schema":
        if isinstance(fmt.get("schema"), dict):
            return dict(fmt["schema"])
        raise OpenAIError(400, "text.format.schema: required object", param="text.format.schema")
    raise OpenAIError(
        400,
        "text.format.type: expected 'text', 'json_object' or 'json_schema'",
        param="text.format.type",
    )


# -- input items -> messages -------------------------------------------------------------


@attrs.define
class _Built:
    """A message being built, and where each of its fields came from in the request."""

    message: dict[str, Any]
    #: ferrule wire path prefix ("$.content") -> request param prefix ("input[2].content").
    sources: dict[str, str]

    def param(self, path: str) -> str:
        prefix = max((p for p in self.sources if path.startswith(p)), key=len, default=None)
        if prefix is None:
            return self.sources["$"]
        param = self.sources[prefix] + path[len(prefix) :]
        if ".content[" in param:
            for wire, responses in _PART_FIELDS:
                param = param.replace(wire, responses, 1)
        return param


def _messages(items: Any, instructions: Any) -> list[dict[str, Any]]:
    built: list[_Built] = []
    if instructions is not None:
        built.append(_Built({"role": "system", "content": instructions}, {"$": "instructions"}))
    if isinstance(items, str):
        built.append(_Built({"role": "user", "content": items}, {"$": "input"}))
    else:
        for index, item in enumerate(_array(items, "input")):
            _add_item(built, _object(item, f"input[{index}]"), f"input[{index}]")
    if not built:
        raise OpenAIError(400, "input: must not be empty", param="input")
    for entry in built:  # each checked here, so that an error names the request's own param
        try:
            Message.from_dict(entry.message)
        except InvalidInputError as exc:
            errors = exc.errors or [{"path": "$", "message": exc.message}]
            params = [entry.param(e["path"]) for e in errors]
            message = "; ".join(f"{p}: {e['message']}" for p, e in zip(params, errors, strict=True))
            raise OpenAIError(400, message, param=params[0]) from None
    return [entry.message for entry in built]


def _assistant(built: list[_Built], where: str, *, before_output: bool = False) -> _Built:
    """The assistant message the item at ``where`` belongs to: the one being built by the
    items before it, else a new one. An item that comes before a turn's text and calls
    (``before_output``: reasoning, the text itself) starts a new one after them."""
    last = built[-1] if built else None
    if last is not None and last.message["role"] == "assistant":
        done = last.message["content"] or last.message.get("tool_calls")
        if not (before_output and done):
            return last
    built.append(_Built({"role": "assistant", "content": []}, {"$": where}))
    return built[-1]


def _add_item(built: list[_Built], item: dict[str, Any], where: str) -> None:
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        role = item.get("role")
        content = item.get("content")
        parts = content if isinstance(content, str) else _parts(content, f"{where}.content")
        if role == "assistant":
            entry = _assistant(built, where, before_output=True)
            entry.message["content"] = parts
            entry.sources["$.content"] = f"{where}.content"
            return
        role = "system" if role == "developer" else role
        built.append(_Built({"role": role, "content": parts}, {"$": where}))
    elif kind == "function_call":
        entry = _assistant(built, where)
        calls = entry.message.setdefault("tool_calls", [])
        entry.sources[f"$.tool_calls[{len(calls)}].function"] = where
        entry.sources[f"$.tool_calls[{len(calls)}].id"] = f"{where}.call_id"
        calls.append(
            {
                "id": item.get("call_id"),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments", "")},
            }
        )
    elif kind == "function_call_output":
        output = item.get("output")
        content = output if isinstance(output, str) else _parts(output, f"{where}.output")
        built.append(
            _Built(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": content},
                {"$": where, "$.tool_call_id": f"{where}.call_id", "$.content": f"{where}.output"},
            )
        )
    elif kind == "reasoning":
        entry = _assistant(built, where, before_output=True)
        # the reasoning text itself, else its summary (what OpenAI's own models send)
        field = "content" if item.get("content") else "summary"
        part: dict[str, Any] = {"type": "text", "text": _texts(item.get(field), f"{where}.{field}")}
        signature = item.get("encrypted_content")
        if signature is not None:
            if not isinstance(signature, str):
                raise OpenAIError(
                    400,
                    f"{where}.encrypted_content: expected string",
                    param=f"{where}.encrypted_content",
                )
            part["signature"] = signature
        entry.message.setdefault("reasoning", []).append(part)
    elif kind == "item_reference":
        raise OpenAIError(
            400,
            f"{where}: item references are not supported by ferrule serve (nothing is stored: "
            "send the items themselves)",
            param=where,
        )
    else:
        raise OpenAIError(
            400,
            f"{where}.type: input items of type {kind!r} are not supported by ferrule serve",
            param=f"{where}.type",
        )


def _texts(pieces: Any, where: str) -> str:
    """The text of a reasoning item's ``content`` or ``summary`` parts, joined."""
    texts = []
    for index, piece in enumerate(_array(pieces, where)):
        text = _object(piece, f"{where}[{index}]").get("text")
        if not isinstance(text, str):
            param = f"{where}[{index}].text"
            raise OpenAIError(400, f"{param}: expected string", param=param)
        texts.append(text)
    return "".join(texts)


def _parts(content: Any, where: str) -> list[dict[str, Any]]:
    return [
        _part(_object(p, f"{where}[{i}]"), f"{where}[{i}]")
        for i, p in enumerate(_array(content, where))
    ]


def _part(part: dict[str, Any], where: str) -> dict[str, Any]:
    """A Responses content part on the ferrule wire (OpenAI's chat shapes)."""
    kind = part.get("type")
    if kind in ("input_text", "output_text"):
        return {"type": "text", "text": part.get("text")}
    if kind == "refusal":
        return {"type": "text", "text": part.get("refusal")}
    if kind in ("input_image", "input_file") and (part.get("file_id") or part.get("file_url")):
        field = "file_id" if part.get("file_id") else "file_url"
        raise OpenAIError(
            400,
            f"{where}.{field}: files are not fetched by ferrule serve: send the content itself "
            "(image_url as a URL or a data URL; file_data)",
            param=f"{where}.{field}",
        )
    if kind == "input_image":
        return {"type": "image_url", "image_url": {"url": part.get("image_url")}}
    if kind == "input_file":
        file = {k: part[k] for k in ("filename", "file_data") if part.get(k) is not None}
        return {"type": "file", "file": file}
    if kind == "input_audio":
        return {"type": "input_audio", "input_audio": part.get("input_audio")}
    raise OpenAIError(
        400,
        f"{where}.type: content parts of type {kind!r} are not supported by ferrule serve",
        param=f"{where}.type",
    )
