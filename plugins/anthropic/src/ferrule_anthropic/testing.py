"""A loopback Anthropic for tests: what a valid Messages request looks like, checked the
way the API checks it, and replies in Anthropic's streaming wire format.

`request_problems` lists everything wrong with a ``POST /v1/messages`` request (headers
and JSON body; a ``POST /v1/messages/count_tokens`` one with ``counting=True``) per
Anthropic's documentation (protocols.md §3.3): required fields, block shapes per role,
tool_use / tool_result pairing, thinking rules. `validator` makes it a
`ferrule_kit.testing.loopback` validator, so a malformed request is answered 400 and fails the
test. `message_events` builds the named events of a reply (text, thinking with its
signature, redacted thinking, tool calls with their input split in fragments, stop reason,
usage), `stream_reply` turns events into a scripted SSE reply and `count_reply` answers a
count. Use them to test your own code against a loopback Anthropic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ferrule_kit.testing.loopback import Action, Pause, RecordedRequest, Reply, sse
from ferrule_kit.testing.wire_checks import is_base64, named_entry, turns

ANTHROPIC_VERSION = "2023-06-01"
MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
BODY_KEYS = frozenset(
    {
        "model",
        "max_tokens",
        "messages",
        "system",
        "stop_sequences",
        "temperature",
        "top_p",
        "top_k",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "metadata",
        "service_tier",
        "stream",
        "cache_control",
        "speed",
        "diagnostics",
        "container",
        "inference_geo",
    }
)
#: What ``POST /v1/messages/count_tokens`` takes: no max_tokens, stream or sampling.
COUNT_BODY_KEYS = frozenset(
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
#: ``cache_control``'s time to live (Anthropic's default: 5 minutes).
CACHE_TTLS = frozenset({"5m", "1h"})
SPEEDS = frozenset({"standard", "fast"})
IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
#: The keys a custom tool's definition may have.
TOOL_KEYS = frozenset({"name", "description", "input_schema", "cache_control", "type"})
TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})
USER_BLOCKS = frozenset({"text", "image", "tool_result", "document"})
ASSISTANT_BLOCKS = frozenset({"text", "tool_use", "thinking", "redacted_thinking"})

Event = tuple[str, dict[str, Any]]


# -- replies ---------------------------------------------------------------------------


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_loopback",
    }


def _fragments(text: str, pieces: int = 3) -> list[str]:
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def message_events(
    *,
    text: Sequence[str] = (),
    reasoning: Sequence[str] = (),
    signature: str = "c2lnbmF0dXJl",
    redacted: Sequence[str] = (),
    tool_calls: Sequence[tuple[str, str, Any]] = (),
    stop_reason: str | None = None,
    stop_sequence: str | None = None,
    input_tokens: int = 12,
    output_tokens: int | None = None,
    model: str = "claude-loopback",
    split_json: Callable[[str], list[str]] = _fragments,
) -> list[Event]:
    """The named events of one streamed reply, in Anthropic's order: thinking (its deltas,
    then its signature), redacted thinking, text, then each tool call (``(id, name,
    input)``, the input JSON cut into fragments by ``split_json``); ``message_delta``
    carries the stop reason (and ``stop_sequence``, the stop string that matched) and the
    cumulative output tokens, ``message_stop`` ends it."""
    events: list[Event] = [
        (
            "message_start",
            {
                "message": {
                    "id": "msg_loopback",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": model,
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": input_tokens, "output_tokens": 1},
                }
            },
        ),
        ("ping", {}),
    ]
    index = 0
    if reasoning:
        events.append(
            (
                "content_block_start",
                {
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
        )
        events += [
            (
                "content_block_delta",
                {"index": index, "delta": {"type": "thinking_delta", "thinking": t}},
            )
            for t in reasoning
        ]
        events.append(
            (
                "content_block_delta",
                {"index": index, "delta": {"type": "signature_delta", "signature": signature}},
            )
        )
        events.append(("content_block_stop", {"index": index}))
        index += 1
    for data in redacted:
        events.append(
            (
                "content_block_start",
                {"index": index, "content_block": {"type": "redacted_thinking", "data": data}},
            )
        )
        events.append(("content_block_stop", {"index": index}))
        index += 1
    if text:
        events.append(
            ("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
        )
        events += [
            ("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": t}})
            for t in text
        ]
        events.append(("content_block_stop", {"index": index}))
        index += 1
    for call_id, name, arguments in tool_calls:
        events.append(
            (
                "content_block_start",
                {
                    "index": index,
                    "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                },
            )
        )
        events += [
            (
                "content_block_delta",
                {"index": index, "delta": {"type": "input_json_delta", "partial_json": f}},
            )
            for f in split_json(json.dumps(arguments))
        ]
        events.append(("content_block_stop", {"index": index}))
        index += 1
    if stop_reason is None:
        stop_reason = "tool_use" if tool_calls else "end_turn"
    if output_tokens is None:
        output_tokens = max(1, len(text) + len(reasoning) + 3 * len(tool_calls))
    events.append(
        (
            "message_delta",
            {
                "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    events.append(("message_stop", {}))
    return events


def event_bytes(name: str, data: Mapping[str, Any]) -> bytes:
    """One named event as Anthropic frames it (``data`` gets ``"type": name``)."""
    return sse({"type": name, **data}, event=name)


def stream_reply(
    events: Iterable[Event | Action],
    *,
    delay: float = 0.0,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """A scripted SSE reply of these events (raw bytes, pauses and resets pass through),
    with ``delay`` seconds between events."""
    actions: list[Any] = []
    for item in events:
        if actions and delay:
            actions.append(Pause(delay))
        actions.append(event_bytes(*item) if isinstance(item, tuple) else item)
    return Reply.sse(actions, headers={"request-id": "req_loopback", **(headers or {})})


def error_reply(
    status: int, error_type: str, message: str, headers: Mapping[str, str] | None = None
) -> Reply:
    return Reply.json(
        error_body(error_type, message),
        status=status,
        headers={"request-id": "req_loopback", **(headers or {})},
    )


def count_reply(input_tokens: int) -> Reply:
    """A ``count_tokens`` reply: ``{"input_tokens": N}``."""
    return Reply.json({"input_tokens": input_tokens}, headers={"request-id": "req_loopback"})


# -- requests --------------------------------------------------------------------------


def _text_problems(block: dict[str, Any], where: str) -> list[str]:
    if not isinstance(block.get("text"), str) or not block["text"]:
        return [f"{where}.text: text content blocks must be non-empty strings"]
    return []


def _image_problems(block: dict[str, Any], where: str) -> list[str]:
    source = block.get("source")
    if not isinstance(source, dict):
        return [f"{where}.source: required object"]
    if source.get("type") == "base64":
        out = []
        if source.get("media_type") not in IMAGE_MEDIA_TYPES:
            out.append(f"{where}.source.media_type: must be one of {sorted(IMAGE_MEDIA_TYPES)}")
        if not is_base64(source.get("data")):
            out.append(f"{where}.source.data: must be base64")
        return out
    if source.get("type") == "url":
        return (
            [] if isinstance(source.get("url"), str) else [f"{where}.source.url: required string"]
        )
    return [f"{where}.source.type: must be 'base64' or 'url'"]


def _block_problems(block: Any, role: str, where: str) -> list[str]:
    if not isinstance(block, dict):
        return [f"{where}: content blocks must be objects"]
    kind = block.get("type")
    allowed = USER_BLOCKS if role == "user" else ASSISTANT_BLOCKS
    if kind not in allowed:
        return [f"{where}.type: {kind!r} is not allowed in a {role} message"]
    if kind == "text":
        return _text_problems(block, where)
    if kind == "image":
        return _image_problems(block, where)
    if kind == "tool_use":
        out = []
        if not isinstance(block.get("id"), str) or not TOOL_USE_ID.match(block["id"]):
            out.append(f"{where}.id: required, matching {TOOL_USE_ID.pattern}")
        if not isinstance(block.get("name"), str) or not TOOL_NAME.match(block["name"]):
            out.append(f"{where}.name: required, matching {TOOL_NAME.pattern}")
        if not isinstance(block.get("input"), dict):
            out.append(f"{where}.input: must be an object")
        return out
    if kind == "tool_result":
        out = []
        if not isinstance(block.get("tool_use_id"), str) or not TOOL_USE_ID.match(
            block["tool_use_id"]
        ):
            out.append(f"{where}.tool_use_id: required, matching {TOOL_USE_ID.pattern}")
        content = block.get("content", "")
        if isinstance(content, list):
            for k, inner in enumerate(content):
                inner_where = f"{where}.content[{k}]"
                if not isinstance(inner, dict) or inner.get("type") not in ("text", "image"):
                    out.append(f"{inner_where}: tool results hold text or image blocks")
                elif inner["type"] == "text":
                    out += _text_problems(inner, inner_where)
                else:
                    out += _image_problems(inner, inner_where)
        elif not isinstance(content, str):
            out.append(f"{where}.content: must be a string or a list of blocks")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            out.append(f"{where}.is_error: must be a boolean")
        return out
    if kind == "thinking":
        if (
            not isinstance(block.get("thinking"), str)
            or not isinstance(block.get("signature"), str)
            or not block["signature"]
        ):
            return [f"{where}: thinking blocks need 'thinking' and a non-empty 'signature'"]
        return []
    if kind == "redacted_thinking":
        return (
            []
            if isinstance(block.get("data"), str) and block["data"]
            else [f"{where}.data: required string"]
        )
    return []


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _messages_problems(messages: Any, thinking_on: bool) -> list[str]:
    out: list[str] = []
    pending_tool_uses: set[str] = set()
    roles = ("user", "assistant")
    hint = " (system goes in 'system')"
    for i, where, role, content in turns(messages, "messages", "content", roles, out, hint=hint):
        if isinstance(content, str):
            if not content and i < len(messages) - 1:
                out.append(f"{where}.content: must be non-empty")
        elif not isinstance(content, list) or not content:
            out.append(f"{where}.content: must be a non-empty string or array of blocks")
            continue
        blocks = _blocks(content)
        for j, block in enumerate(blocks):
            out += _block_problems(block, role, f"{where}.content[{j}]")
        typed = [b for b in blocks if isinstance(b, dict)]
        if role == "user":
            results = [str(b.get("tool_use_id")) for b in typed if b.get("type") == "tool_result"]
            kinds = [b.get("type") for b in typed]
            if results and kinds[: len(results)] != ["tool_result"] * len(results):
                out.append(f"{where}: tool_result blocks must come first in the user turn")
            unknown = set(results) - pending_tool_uses
            if unknown:
                out.append(f"{where}: tool_result for unknown tool_use id(s) {sorted(unknown)}")
            if pending_tool_uses - set(results):
                out.append(
                    f"{where}: tool_use ids {sorted(pending_tool_uses - set(results))} were found "
                    "without tool_result blocks immediately after"
                )
            pending_tool_uses = set()
        else:
            if pending_tool_uses:
                out.append(f"{where}: tool_use ids {sorted(pending_tool_uses)} got no tool_result")
            pending_tool_uses = {str(b.get("id")) for b in typed if b.get("type") == "tool_use"}
    if not isinstance(messages, list):
        return out
    last_assistant = next(
        (m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "assistant"),
        None,
    )
    if thinking_on and last_assistant is not None:
        blocks = [b for b in _blocks(last_assistant.get("content")) if isinstance(b, dict)]
        if any(b.get("type") == "tool_use" for b in blocks) and (
            blocks[0].get("type") not in ("thinking", "redacted_thinking")
        ):
            out.append(
                "messages: Expected `thinking` or `redacted_thinking`, but found "
                f"`{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` "
                "message must start with a thinking block"
            )
    return out


def _thinking_problems(body: dict[str, Any]) -> list[str]:
    thinking = body.get("thinking")
    if thinking is None:
        return []
    if not isinstance(thinking, dict):
        return ["thinking: must be an object"]
    kind = thinking.get("type")
    out = []
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        max_tokens = body.get("max_tokens")
        if not isinstance(budget, int) or budget < 1024:
            out.append("thinking.budget_tokens: must be an integer >= 1024")
        elif isinstance(max_tokens, int) and budget >= max_tokens:
            out.append("max_tokens: must be greater than thinking.budget_tokens")
    elif kind not in ("disabled", "adaptive"):
        out.append("thinking.type: must be 'enabled', 'disabled' or 'adaptive'")
    if kind in ("enabled", "adaptive"):
        if body.get("temperature") not in (None, 1, 1.0):
            out.append("temperature: may only be set to 1 when thinking is enabled")
        if "top_k" in body:
            out.append("top_k: is not compatible with thinking")
        if "top_p" in body and not 0.95 <= body["top_p"] <= 1:
            out.append("top_p: must be between 0.95 and 1 when thinking is enabled")
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
            out.append("tool_choice: forced tool use is not compatible with thinking")
    return out


def _tools_problems(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        return ["tools: must be an array"]
    out = []
    names = set()
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not named_entry(
            tool, where, TOOL_KEYS, TOOL_NAME, names, out, duplicate="tool names must be unique"
        ):
            continue
        if "description" in tool and not isinstance(tool["description"], str):
            out.append(f"{where}.description: must be a string")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            out.append(f"{where}.input_schema: must be a JSON schema with type 'object'")
    return out


def _output_config_problems(config: Any) -> list[str]:
    if not isinstance(config, dict) or set(config) - {"effort", "format"}:
        return ["output_config: an object with effort and/or format"]
    out = []
    if "effort" in config and config["effort"] not in EFFORTS:
        out.append(f"output_config.effort: must be one of {sorted(EFFORTS)}")
    if "format" in config:
        fmt = config["format"]
        if (
            not isinstance(fmt, dict)
            or fmt.get("type") != "json_schema"
            or not isinstance(fmt.get("schema"), dict)
        ):
            out.append("output_config.format: must be {type: json_schema, schema: {...}}")
    return out


def _options_problems(body: dict[str, Any]) -> list[str]:
    """The top-level ``cache_control`` (automatic caching: ``{"type": "ephemeral",
    "ttl"?}`` or null), ``speed`` and ``diagnostics``."""
    out = []
    cache = body.get("cache_control")
    if cache is not None:
        if not isinstance(cache, dict) or cache.get("type") != "ephemeral":
            out.append("cache_control.type: must be 'ephemeral'")
        else:
            out += [
                f"cache_control.{key}: Extra inputs are not permitted"
                for key in sorted(set(cache) - {"type", "ttl"})
            ]
            if "ttl" in cache and cache["ttl"] not in CACHE_TTLS:
                out.append(f"cache_control.ttl: must be one of {sorted(CACHE_TTLS)}")
    if body.get("speed") is not None and body["speed"] not in SPEEDS:
        out.append(f"speed: must be one of {sorted(SPEEDS)} or null")
    diagnostics = body.get("diagnostics")
    if diagnostics is not None:
        if not isinstance(diagnostics, dict) or set(diagnostics) - {"previous_message_id"}:
            out.append("diagnostics: an object with previous_message_id only")
        elif not isinstance(diagnostics.get("previous_message_id"), (str, type(None))):
            out.append("diagnostics.previous_message_id: a message id (string) or null")
    return out


def request_problems(
    body: Any,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    *,
    counting: bool = False,
) -> list[str]:
    """Everything Anthropic would refuse in this request (empty when it is valid);
    ``counting``: a ``POST /v1/messages/count_tokens`` request."""
    headers = {
        k.lower(): v for k, v in (headers.items() if isinstance(headers, Mapping) else headers)
    }
    out = []
    if not headers.get("x-api-key"):
        out.append("header x-api-key: required")
    if headers.get("anthropic-version") != ANTHROPIC_VERSION:
        out.append(f"header anthropic-version: must be {ANTHROPIC_VERSION}")
    if not headers.get("content-type", "").startswith("application/json"):
        out.append("header content-type: must be application/json")
    if not isinstance(body, dict):
        return [*out, "body: must be a JSON object"]
    unknown = set(body) - (COUNT_BODY_KEYS if counting else BODY_KEYS)
    if unknown:
        out.append(f"body: unknown field(s) {sorted(unknown)}")
    if not isinstance(body.get("model"), str) or not body["model"]:
        out.append("model: required string")
    max_tokens = body.get("max_tokens")
    if not counting:  # a count takes neither (an unknown field there, above)
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            out.append("max_tokens: required integer >= 1")
        if body.get("stream") is not True:
            out.append("stream: ferrule always streams; expected true")
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        if not isinstance(system, list) or any(
            not isinstance(b, dict) or b.get("type") != "text" for b in system
        ):
            out.append("system: a string or an array of text blocks")
    for key, low, high in (("temperature", 0, 1), ("top_p", 0, 1)):
        value = body.get(key)
        if value is not None and (not isinstance(value, (int, float)) or not low <= value <= high):
            out.append(f"{key}: must be a number from {low} to {high}")
    stops = body.get("stop_sequences")
    if stops is not None and (
        not isinstance(stops, list) or not all(isinstance(s, str) for s in stops)
    ):
        out.append("stop_sequences: an array of strings")
    if "tools" in body:
        out += _tools_problems(body["tools"])
    if "output_config" in body:
        out += _output_config_problems(body["output_config"])
    out += _options_problems(body)
    thinking = body.get("thinking")
    thinking_on = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    out += _thinking_problems(body)
    out += _messages_problems(body.get("messages"), thinking_on)
    return out


def validator(record: RecordedRequest) -> list[str]:
    """`request_problems` as a `ferrule_kit.testing.loopback` validator, for Messages and
    count_tokens requests."""
    if record.method != "POST" or record.path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
        return [
            f"{record.method} {record.path}: expected POST {MESSAGES_PATH} or {COUNT_TOKENS_PATH}"
        ]
    try:
        body = record.json
    except ValueError as exc:
        return [f"body: not JSON ({exc})"]
    return request_problems(body, record.headers, counting=record.path == COUNT_TOKENS_PATH)
