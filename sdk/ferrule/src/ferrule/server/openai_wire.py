"""The OpenAI Chat Completions format, server side: a request translated to the LM
contract's ``infer`` input (`chat_request_from_openai`, refusing what it cannot honour
rather than dropping it), ``infer`` items translated back to a completion or its chunks
(`completion_message`, `delta_from_item`, `openai_usage`), and errors in OpenAI's shape
(`OpenAIError`). Pure translation: no HTTP here."""

from __future__ import annotations

from typing import Any, cast, get_args

import attrs
from ferrule_kernel import FerruleError, InvalidInputError
from ferrule_kit.models.lm import ANY_JSON_OBJECT, MessageAccumulator, ReasoningEffort

from .statuses import status_of


@attrs.define
class OpenAIError(Exception):
    """An error in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""

    status: int
    message: str
    type: str = "invalid_request_error"
    param: str | None = None
    code: str | None = None
    headers: dict[str, str] | None = None

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }

    @classmethod
    def from_ferrule(cls, exc: FerruleError, renames: dict[str, str] | None = None) -> OpenAIError:
        row = status_of(exc)  # by kind family: every invalid input is a 4xx
        status, kind = row.openai, row.openai_type
        param = "model" if exc.kind in ("unknown_model", "model_not_found") else None
        message = exc.message
        errors = exc.details.get("errors") if isinstance(exc, InvalidInputError) else None
        entries = [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
        if entries:
            params = [_openai_param(str(e.get("path", "$")), renames or {}) for e in entries]
            message = "; ".join(
                f"{p}: {e.get('message', exc.message)}" if p else str(e.get("message", exc.message))
                for p, e in zip(params, entries, strict=True)
            )
            param = params[0]
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        if exc.kind == "quota_exceeded":  # waiting does not help: tell the client not to retry
            headers = {"x-should-retry": "false"}
        return cls(status, message, kind, param, exc.kind, headers)


def _openai_param(path: str, renames: dict[str, str]) -> str | None:
    """``$.messages[0].content`` -> ``messages[0].content`` (OpenAI's ``param``)."""
    param = path[2:] if path.startswith("$.") else None
    if param is None:
        return None
    head, sep, rest = param.partition(".")
    key, bracket, index = head.partition("[")
    return renames.get(key, key) + bracket + index + sep + rest


# Accepted and passed on (translated), accepted and ignored (hints with no effect on the
# reply's content), and accepted only at their "off" value.
_OPENAI_TRANSLATED = {
    "model", "messages", "tools", "tool_choice", "temperature", "top_p", "max_tokens",
    "max_completion_tokens", "stop", "reasoning_effort", "response_format", "stream",
    "stream_options",
}  # fmt: skip

_OPENAI_IGNORED = {
    "user", "metadata", "store", "seed", "service_tier", "parallel_tool_calls",
    "prompt_cache_key", "safety_identifier",
}  # fmt: skip

_OPENAI_OFF_ONLY = {
    "n": (None, 1),
    "logprobs": (None, False),
    "top_logprobs": (None, 0),
    "logit_bias": (None, {}),
    "frequency_penalty": (None, 0, 0.0),
    "presence_penalty": (None, 0, 0.0),
    "modalities": (None, ["text"]),
    "audio": (None,),
    "prediction": (None,),
    "web_search_options": (None,),
    "functions": (None,),
    "function_call": (None,),
}


@attrs.frozen
class ChatRequest:
    """A chat-completion request translated to the ``infer`` input of the LM contract."""

    model: str
    inputs: dict[str, Any]
    stream: bool
    include_usage: bool
    #: InferInput field -> the OpenAI parameter it came from (for error ``param``s).
    renames: dict[str, str]


#: Message fields OpenAI's API takes that carry nothing for a backend: a participant's
#: name, and what a reply's ``model_dump()`` puts back (citations of its text, and the
#: openai SDK's own ``parsed`` content of a ``.parse()`` reply).
_MESSAGE_IGNORED = ("name", "annotations", "parsed")


def _message_from_openai(message: Any, index: int) -> Any:
    """An OpenAI input message on the ferrule wire. Every field OpenAI's API accepts is
    taken, null where it may be null (so a reply put back with ``model_dump()`` works);
    ``reasoning_content`` (as ferrule and other compatible servers send reasoning) becomes
    the message's reasoning."""
    if not isinstance(message, dict):
        return message  # validation names it
    where = f"messages[{index}]"
    out = {k: v for k, v in message.items() if k not in _MESSAGE_IGNORED}
    for key in ("function_call", "audio", "tool_calls", "refusal", "reasoning_content"):
        if key in out and out[key] is None:
            del out[key]
    if out.get("role") == "developer":
        out["role"] = "system"
    if "function_call" in out:
        raise OpenAIError(
            400,
            f"{where}.function_call: deprecated, send tool_calls",
            param=f"{where}.function_call",
        )
    if "audio" in out:  # a reference to audio OpenAI stored: nothing here holds it
        raise OpenAIError(
            400,
            f"{where}.audio: audio replies are not stored by ferrule serve",
            param=f"{where}.audio",
        )
    refusal = out.pop("refusal", None)
    if isinstance(refusal, str) and refusal and not out.get("content"):
        out["content"] = refusal  # what the assistant said: its refusal
    if out.get("tool_calls") == []:
        del out["tool_calls"]
    reasoning = out.pop("reasoning_content", None)
    if reasoning is not None:
        if not isinstance(reasoning, str):
            param = f"{where}.reasoning_content"
            raise OpenAIError(400, f"{param}: expected string", param=param)
        if reasoning:
            out["reasoning"] = [{"type": "text", "text": reasoning}]
    content = out.get("content")
    if isinstance(content, list):  # a refusal part becomes text, keeping each part's index
        out["content"] = [
            {"type": "text", "text": part.get("refusal", "")}
            if isinstance(part, dict) and part.get("type") == "refusal"
            else part
            for part in content
        ]
    return out


def tool_choice_from_openai(choice: Any, param: str) -> Any:
    """``tool_choice`` (OpenAI's shapes) as the LM contract takes it: ``"auto"``,
    ``"none"``, ``"required"``, or the named function ``{"type": "function", "function":
    {"name": ...}}`` (the Responses API's flat ``{"type": "function", "name": ...}`` too)."""
    if choice is None or choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function":
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        if isinstance(name, str):
            return {"type": "function", "function": {"name": name}}
    raise OpenAIError(
        400,
        f"{param}: expected 'auto', 'none', 'required' or a function to call "
        "({'type': 'function', 'function': {'name': ...}}); allowed_tools and custom tools "
        "are not supported by ferrule serve",
        param=param,
    )


def _tool_from_openai(tool: Any) -> Any:
    """A tool as the LM contract takes it: ``strict`` dropped (no backend needs it), and
    a null ``description`` or ``parameters`` left out (as some clients send them)."""
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        function = {
            k: v
            for k, v in tool["function"].items()
            if k != "strict" and not (k in ("description", "parameters") and v is None)
        }
        return {**tool, "function": function}
    return tool


def chat_request_from_openai(body: Any) -> ChatRequest:
    """Translate an OpenAI chat-completion request body; unsupported options are refused
    (`OpenAIError`) rather than silently dropped."""
    if not isinstance(body, dict):
        raise OpenAIError(400, "the request body must be a JSON object")
    for key in body:
        if (
            key not in _OPENAI_TRANSLATED
            and key not in _OPENAI_IGNORED
            and key not in _OPENAI_OFF_ONLY
        ):
            raise OpenAIError(400, f"Unrecognized request argument supplied: {key}", param=key)
    for key, allowed in _OPENAI_OFF_ONLY.items():
        if key in body and body[key] not in allowed:
            raise OpenAIError(400, f"{key} is not supported by ferrule serve", param=key)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise OpenAIError(400, "model: a model id (string) is required", param="model")
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise OpenAIError(400, "stream: expected boolean", param="stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict) or not isinstance(options.get("include_usage", False), bool):
        raise OpenAIError(
            400, "stream_options: expected {'include_usage': boolean}", param="stream_options"
        )

    messages = body.get("messages")
    inputs: dict[str, Any] = {
        "messages": [_message_from_openai(m, i) for i, m in enumerate(messages)]
        if isinstance(messages, list)
        else messages
    }
    renames: dict[str, str] = {}
    tool_choice = tool_choice_from_openai(body.get("tool_choice"), "tool_choice")
    tools = body.get("tools")
    if tools is not None and tool_choice != "none":  # "none": the model sees no tools
        inputs["tools"] = (
            [_tool_from_openai(t) for t in tools] if isinstance(tools, list) else tools
        )
        if tool_choice is not None:
            inputs["tool_choice"] = tool_choice
    elif tool_choice not in (None, "auto", "none"):
        raise OpenAIError(
            400, "tool_choice: forces a tool call, but no tools were given", param="tool_choice"
        )
    for key in ("temperature", "top_p"):
        if body.get(key) is not None:
            inputs[key] = body[key]
    for key in ("max_completion_tokens", "max_tokens"):  # the first one given wins
        if body.get(key) is not None:
            inputs["max_tokens"] = body[key]
            renames["max_tokens"] = key
            break
    stop = body.get("stop")
    if stop is not None:
        inputs["stop"] = [stop] if isinstance(stop, str) else stop
    effort = body.get("reasoning_effort")
    if effort not in (None, "none"):
        inputs["reasoning"] = check_effort(effort, "reasoning_effort")
    response_format = body.get("response_format")
    if response_format is not None:
        inputs["output_schema"] = _output_schema(response_format)
        renames["output_schema"] = "response_format"
    return ChatRequest(model, inputs, stream, bool(options.get("include_usage", False)), renames)


def check_effort(effort: Any, param: str) -> ReasoningEffort:
    """An OpenAI reasoning effort other than ``"none"``, for InferInput's one reasoning
    switch, which takes the level itself; checked here so that the message lists OpenAI's
    values rather than the switch's own true/false."""
    if effort not in get_args(ReasoningEffort):
        levels = ", ".join(repr(level) for level in ("none", *get_args(ReasoningEffort)))
        raise OpenAIError(400, f"{param}: expected one of {levels}, got {effort!r}", param=param)
    return cast(ReasoningEffort, effort)


def _output_schema(response_format: Any) -> dict[str, Any] | None:
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return dict(ANY_JSON_OBJECT)  # JSON mode: backends that have one use it for this
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if isinstance(spec, dict) and isinstance(spec.get("schema"), dict):
            return spec["schema"]
        raise OpenAIError(
            400, "response_format.json_schema.schema: required object", param="response_format"
        )
    raise OpenAIError(
        400,
        "response_format: expected type 'text', 'json_object' or 'json_schema'",
        param="response_format",
    )


def openai_usage(usage: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if usage.get("reasoning_tokens") is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": usage["reasoning_tokens"]}
    return out


def delta_from_item(item: dict[str, Any]) -> dict[str, Any]:
    """One ``infer`` item as an OpenAI chunk ``delta`` (reasoning as ``reasoning_content``,
    as OpenAI-compatible servers send it)."""
    message = item["message"]
    delta: dict[str, Any] = {}
    text = "".join(p.get("text", "") for p in message.get("content", ()))
    if text:
        delta["content"] = text
    reasoning = "".join(p.get("text", "") for p in message.get("reasoning", ()))
    if reasoning:
        delta["reasoning_content"] = reasoning
    calls = message.get("tool_calls")
    if calls:
        delta["tool_calls"] = calls  # the LM contract streams them in OpenAI's shape already
    return delta


def completion_message(acc: MessageAccumulator) -> dict[str, Any]:
    """The folded reply as an OpenAI ``message``; tool-call arguments stay the model's
    own JSON text, as OpenAI returns them."""
    text = "".join(acc.text)
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if acc.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for _, c in sorted(acc.calls.items())
        ]
        if not text:
            message["content"] = None
    reasoning = "".join(p.text for p in acc.reasoning)
    if reasoning:
        message["reasoning_content"] = reasoning
    return message
