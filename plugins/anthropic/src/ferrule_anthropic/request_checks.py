"""What a valid Anthropic Messages request looks like, checked the way the API checks it
(`ferrule_anthropic.testing` re-exports `request_problems` and `validator`).

`request_problems` lists everything wrong with a ``POST /v1/messages`` request (headers
and JSON body; a ``POST /v1/messages/count_tokens`` one with ``counting=True``) per
Anthropic's documentation (protocols.md §3.3): required fields, block shapes per role,
tool_use / tool_result pairing, thinking rules, cache breakpoints. `validator` makes it a
`ferrule_kit.testing.loopback` validator, so a malformed request is answered 400 and fails
the test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ferrule_kit.testing.loopback import RecordedRequest
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
#: Anthropic's most cache breakpoints in one request.
MAX_CACHE_BREAKPOINTS = 4
#: The models that refuse a prefill (a conversation ending with their own turn): Claude
#: 4.6 and later, as Anthropic's model pages say.
PREFILL_REFUSED = re.compile(
    r"^claude-(?:opus|sonnet|haiku)-(?:4-(?:[6-9]|\d\d)|[5-9]|\d\d)(?:-|$)"
)
#: What a text block of the ``system`` array takes.
SYSTEM_BLOCK_KEYS = frozenset({"type", "text", "cache_control", "citations"})
TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})
USER_BLOCKS = frozenset({"text", "image", "tool_result", "document"})
ASSISTANT_BLOCKS = frozenset(
    {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "mcp_tool_use"}
)
#: A server tool's declared type: its name and the date of its version.
SERVER_TOOL_TYPE = re.compile(r"^[a-z_]+_\d{8}$")


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
    if role == "assistant" and isinstance(kind, str) and kind.endswith("_tool_result"):
        if kind == "tool_result" or not isinstance(block.get("tool_use_id"), str):
            return [f"{where}: a server tool's result needs the tool_use_id it answers"]
        return []
    if kind in ("server_tool_use", "mcp_tool_use"):
        if not isinstance(block.get("id"), str) or not isinstance(block.get("input"), dict):
            return [f"{where}: a server tool use needs its id and input object"]
        return []
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
        if isinstance(tool, dict) and SERVER_TOOL_TYPE.match(str(tool.get("type"))):
            # a tool Anthropic defines: its own fields, and a name (unique like any)
            if not isinstance(tool.get("name"), str) or tool["name"] in names:
                out.append(f"{where}.name: required, and unique among the tools")
            names.add(tool.get("name"))
            continue
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


def _cache_control_problems(cache: Any, where: str) -> list[str]:
    if not isinstance(cache, dict) or cache.get("type") != "ephemeral":
        return [f"{where}.type: must be 'ephemeral'"]
    out = [
        f"{where}.{key}: Extra inputs are not permitted"
        for key in sorted(set(cache) - {"type", "ttl"})
    ]
    if "ttl" in cache and cache["ttl"] not in CACHE_TTLS:
        out.append(f"{where}.ttl: must be one of {sorted(CACHE_TTLS)}")
    return out


def _system_problems(system: Any) -> list[str]:
    if system is None or isinstance(system, str):
        return []
    if not isinstance(system, list) or any(
        not isinstance(b, dict) or b.get("type") != "text" for b in system
    ):
        return ["system: a string or an array of text blocks"]
    out = []
    for i, block in enumerate(system):
        where = f"system[{i}]"
        out += [
            f"{where}.{key}: Extra inputs are not permitted"
            for key in sorted(set(block) - SYSTEM_BLOCK_KEYS)
        ]
        if not isinstance(block.get("text"), str) or not block["text"]:
            out.append(f"{where}.text: text content blocks must be non-empty")
        if "cache_control" in block:
            out += _cache_control_problems(block["cache_control"], f"{where}.cache_control")
    return out


def _cache_problems(body: dict[str, Any]) -> list[str]:
    """Anthropic's limits on cache breakpoints: four in all (the top-level one included),
    and no hour-long one after a five-minute one (in the order tools, system, messages)."""
    marked: list[Any] = []
    for key in ("tools", "system", "messages"):
        entries = body.get(key)
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            blocks = entry.get("content") if key == "messages" else [entry]
            for block in blocks if isinstance(blocks, list) else ():
                if isinstance(block, dict) and isinstance(block.get("cache_control"), dict):
                    marked.append(block["cache_control"])
    if isinstance(body.get("cache_control"), dict):
        marked.append(body["cache_control"])
    out = []
    if len(marked) > MAX_CACHE_BREAKPOINTS:
        out.append(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(marked)}."
        )
    ttls = [c.get("ttl", "5m") for c in marked]
    if any(ttl == "1h" and "5m" in ttls[:i] for i, ttl in enumerate(ttls)):
        out.append(
            "cache_control: a ttl='1h' cache_control block must not come after a ttl='5m' one"
        )
    return out


def _options_problems(body: dict[str, Any]) -> list[str]:
    """The top-level ``cache_control`` (automatic caching: ``{"type": "ephemeral",
    "ttl"?}`` or null), ``speed`` and ``diagnostics``."""
    out = []
    cache = body.get("cache_control")
    if cache is not None:
        out += _cache_control_problems(cache, "cache_control")
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
    out += _system_problems(body.get("system"))
    out += _cache_problems(body)
    messages = body.get("messages")
    if (
        isinstance(messages, list)
        and messages
        and isinstance(messages[-1], dict)
        and messages[-1].get("role") == "assistant"
        and PREFILL_REFUSED.match(str(body.get("model")))
    ):
        out.append("messages: this model does not support assistant message prefill")
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
