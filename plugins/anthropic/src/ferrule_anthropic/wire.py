"""Anthropic Messages API wire translation: pure functions, no I/O.

`build_request` turns an `InferInput` into the JSON body of ``POST /v1/messages`` with
``stream: true`` (`build_count_request`: of ``POST /v1/messages/count_tokens``); the
reply's events are `ferrule_anthropic.replies`'. Both are used by the component in
`ferrule_anthropic.model` and tested on their own.

Reasoning round trip: a ``thinking`` block becomes reasoning deltas whose last one
carries the block's ``signature``; a ``redacted_thinking`` block becomes one reasoning
part with empty text and the signature ``"redacted_thinking:" + data``. Both are sent
back unchanged on the next turn, as Anthropic requires; reasoning parts without a
signature, or with another provider's, are not sent, since Anthropic would reject them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ferrule_kit.content.messages import (
    Message,
    ReasoningPart,
    TextPart,
    system_and_turns,
    system_text,
)
from ferrule_kit.content.parts import ANTHROPIC, registry
from ferrule_kit.content.policy import Accepts, ContentPolicy
from ferrule_kit.errors import (
    InvalidInputError,
    ModelError,
    ProviderProtocolError,
    QuotaExceededError,
)
from ferrule_kit.models.lm import (
    InferInput,
)
from ferrule_kit.network.http import ProviderErrorInfo, environment_base_url, provider_error
from ferrule_kit.network.http import parse_error_body as parse_generic_error

PROVIDER = "anthropic"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: Moves the endpoint when no base_url is given, as in Anthropic's SDK.
BASE_URL_VARIABLES = ("ANTHROPIC_BASE_URL",)
#: Output cap sent when the caller gives none; Anthropic requires one. 4096 is the
#: largest value every Claude model accepts (the Claude 3 models top out there).
DEFAULT_MAX_TOKENS = 4096
#: Room left for the answer above the thinking budget when the caller gives no cap.
ANSWER_TOKENS = 4096
MIN_THINKING_BUDGET = 1024
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
DEFAULT_EFFORT = "medium"
#: Anthropic accepts these image types, up to 5 MB each (decoded).
IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: What Anthropic takes besides text (Anthropic's documentation spells 2**20 bytes "MB"):
#: images as base64 or by public URL (a ``url`` image source, which Anthropic fetches), and
#: documents (PDF or plain text) within its 32 MB request.
CONTENT = ContentPolicy(
    PROVIDER,
    ANTHROPIC,
    label="Anthropic (Claude)",
    limits={
        "image": Accepts(formats=IMAGE_MEDIA_TYPES, max_bytes=MAX_IMAGE_BYTES),
        "document": Accepts(
            formats=frozenset({"application/pdf", "text/plain"}), max_bytes=32 * 1024 * 1024
        ),
    },
    elsewhere={
        "audio": "Transcribe it to text first, or use a provider that takes audio (OpenAI, Gemini)",
    },
    size_unit="MB",
)
REDACTED_PREFIX = "redacted_thinking:"
#: A reasoning part's signature that is a block of a server tool's work (its
#: ``server_tool_use`` or its ``*_tool_result``), kept whole to go back as it came.
SERVER_BLOCK_PREFIX = "anthropic_server_block:"
#: Anthropic caches up to four breakpoints per request.
MAX_CACHE_BREAKPOINTS = 4


# claude-<family>-<major>[-<minor>][-<date>] (Claude 4 and later); Claude 3 ids put the
# version first (claude-3-7-sonnet-...) and all use budget-based thinking.
_FAMILY_FIRST = re.compile(r"^claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?:-|$)")


def default_base_url() -> str:
    return environment_base_url(BASE_URL_VARIABLES, DEFAULT_BASE_URL)


def messages_url(base_url: str | None) -> str:
    base = (base_url or default_base_url()).rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def count_tokens_url(base_url: str | None) -> str:
    return f"{messages_url(base_url)}/count_tokens"


def request_headers(api_key: str) -> dict[str, str]:
    """Anthropic's auth headers (`ferrule_kit.network.http` adds the content type and ``Accept``)."""
    return {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION}


def uses_adaptive_thinking(model: str) -> bool:
    """Claude 4.7 and later reject budget-based thinking; they take ``adaptive`` thinking."""
    match = _FAMILY_FIRST.match(model)
    if match is None:
        return False
    version = (int(match.group(1)), int(match.group(2) or 0))
    return version >= (4, 7)


# -- request ---------------------------------------------------------------------------


def encode_part(part: Any, field: str = "content") -> dict[str, Any]:
    """One content part as an Anthropic content block: text here, any other part by its
    content plugin once `CONTENT` lets it through (`UnsupportedContentError` otherwise)."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    block: dict[str, Any] = registry.encode(part, CONTENT, field)
    return block


def _content_blocks(message: Message, where: str) -> list[dict[str, Any]]:
    blocks = []
    for j, part in enumerate(message.contents):
        if isinstance(part, TextPart) and not part.text:
            continue  # Anthropic rejects empty text blocks
        blocks.append(encode_part(part, f"{where}.content[{j}]"))
    return blocks


def reasoning_block(part: ReasoningPart) -> dict[str, Any] | None:
    """A reasoning part as the thinking block (or the server tool's block) it came from,
    or None if it has none: no signature, or another provider's (Anthropic signatures are
    base64, without a colon)."""
    if part.signature is None:
        return None
    if part.signature.startswith(SERVER_BLOCK_PREFIX):
        block: dict[str, Any] = json.loads(part.signature[len(SERVER_BLOCK_PREFIX) :])
        return block
    if part.signature.startswith(REDACTED_PREFIX):
        return {"type": "redacted_thinking", "data": part.signature[len(REDACTED_PREFIX) :]}
    if ":" in part.signature:
        return None
    return {"type": "thinking", "thinking": part.text, "signature": part.signature}


def _tool_result(message: Message, where: str) -> dict[str, Any]:
    if message.tool_call_id is None:
        raise InvalidInputError(
            "a tool message needs the tool_call_id of the call it answers",
            field=f"{where}.tool_call_id",
        )
    blocks = _content_blocks(message, where)
    content: Any
    if all(b["type"] == "text" for b in blocks):
        content = "".join(b["text"] for b in blocks)
    else:
        content = blocks
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if content:
        block["content"] = content
    return block


def _assistant_blocks(message: Message, where: str) -> list[dict[str, Any]]:
    # Thinking first, as Anthropic produced it; then the answer, then its tool calls.
    blocks = [b for b in map(reasoning_block, message.reasoning) if b is not None]
    blocks += _content_blocks(message, where)
    blocks += [
        {
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": _tool_input(call.arguments, where),
        }
        for call in message.tool_calls
    ]
    return blocks


def _tool_input(arguments: Any, where: str) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        raise InvalidInputError(
            "Anthropic needs tool-call arguments to be a JSON object", field=f"{where}.tool_calls"
        )
    return arguments


def _turn(message: Message, where: str) -> tuple[str, list[dict[str, Any]]]:
    if message.role == "user":
        return "user", _content_blocks(message, where)
    if message.role == "assistant":
        return "assistant", _assistant_blocks(message, where)
    return "user", [_tool_result(message, where)]  # a tool message


def _join(
    role: str, previous: list[dict[str, Any]], blocks: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Anthropic alternates user / assistant: a turn's blocks join the turn before of the
    same role, with the tool_result blocks leading the user turn that answers a tool_use."""
    both = previous + blocks
    if role != "user":
        return both
    return [b for b in both if b["type"] == "tool_result"] + [
        b for b in both if b["type"] != "tool_result"
    ]


def _system_and_turns(messages: list[Message]) -> tuple[list[str], list[dict[str, Any]]]:
    system, turns = system_and_turns(messages, PROVIDER, _turn, join=_join)
    return system, [{"role": role, "content": blocks} for role, blocks in turns]


def _loop_started_without_thinking(turns: list[dict[str, Any]]) -> bool:
    """True when the request continues a tool-use loop whose assistant turn has no thinking.

    A tool-use loop is one assistant turn and keeps one thinking setting: Anthropic refuses
    thinking switched on in its middle (the turn would have to start with a thinking
    block), so such a request goes without thinking; the next user turn may think again.
    """
    if (
        len(turns) < 2
        or turns[-1]["role"] != "user"
        or turns[-1]["content"][0]["type"] != "tool_result"
    ):
        return False
    assistant = turns[-2]["content"]
    return assistant[0]["type"] not in ("thinking", "redacted_thinking")


def _thinking(inputs: InferInput, model: str, default_cap: int) -> tuple[dict[str, Any], int]:
    """The ``thinking`` switch and the ``max_tokens`` to send with it. Without a cap in the
    request, the cap leaves room for the whole thinking budget plus an answer."""
    effort = inputs.effort or DEFAULT_EFFORT
    budget = THINKING_BUDGETS[effort]
    max_tokens = inputs.max_tokens
    if max_tokens is None:
        max_tokens = max(default_cap, budget + ANSWER_TOKENS)
        if uses_adaptive_thinking(model):
            return {"type": "adaptive"}, max_tokens
        return {"type": "enabled", "budget_tokens": budget}, max_tokens
    if uses_adaptive_thinking(model):
        return {"type": "adaptive"}, max_tokens
    if max_tokens <= MIN_THINKING_BUDGET:
        raise InvalidInputError(
            f"with reasoning on, Anthropic needs max_tokens above {MIN_THINKING_BUDGET} "
            f"(its smallest thinking budget); got {max_tokens}",
            field="$.max_tokens",
        )
    return {"type": "enabled", "budget_tokens": min(budget, max_tokens - 1)}, max_tokens


def _system_blocks(inputs: InferInput) -> list[dict[str, Any]]:
    """The ``system`` array: one text block per system message, each carrying the
    ``cache_control`` its `InferInput.system_cache` mark asks for."""
    blocks: list[dict[str, Any]] = []
    marks = iter(inputs.system_cache)
    for index, message in enumerate(inputs.messages):
        if message.role != "system":
            continue
        mark = next(marks, None)
        text = system_text(message, f"$.messages[{index}]", PROVIDER)
        if not text:
            continue  # Anthropic rejects empty text blocks
        block: dict[str, Any] = {"type": "text", "text": text}
        if mark is not None:
            block["cache_control"] = {"type": "ephemeral", "ttl": mark.ttl}
        blocks.append(block)
    return blocks


def _check_cache_marks(body: dict[str, Any]) -> None:
    """Anthropic's rules on cache breakpoints, checked before sending: at most
    `MAX_CACHE_BREAKPOINTS`, and no hour-long one after a five-minute one."""
    system = body.get("system")
    ttls = [b["cache_control"]["ttl"] for b in system or () if "cache_control" in b]
    if isinstance(system, list) and len(ttls) + ("cache_control" in body) > MAX_CACHE_BREAKPOINTS:
        raise InvalidInputError(
            f"Anthropic takes at most {MAX_CACHE_BREAKPOINTS} cache breakpoints "
            "(the marked system blocks and the prompt cache together)",
            field="$.system_cache",
        )
    if "cache_control" in body:
        ttls.append(body["cache_control"]["ttl"])
    if any(ttl == "1h" and "5m" in ttls[:i] for i, ttl in enumerate(ttls)):
        raise InvalidInputError(
            "a block cached for 1h cannot follow one cached for 5m (Anthropic's order of "
            "cache lifetimes): cache the earlier blocks for 1h too, or the later for 5m",
            field="$.system_cache",
        )


def build_request(
    inputs: InferInput,
    *,
    model: str,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    trailing_user_message: str | None = None,
    server_tools: frozenset[str] | None = None,
) -> dict[str, Any]:
    """The ``POST /v1/messages`` body for ``inputs``. ``server_tools``: the host's
    allow-list of the server tools a request may carry (`check_server_tools`). ``max_tokens`` is the component's
    default cap, used when ``inputs.max_tokens`` is not given (raised, with reasoning on,
    to fit the thinking budget and an answer). ``trailing_user_message``: the text of a
    user turn added when the conversation ends with the model's turn (models from Claude
    4.6 on refuse to continue a turn of their own, a "prefill")."""
    system, turns = _system_and_turns(inputs.messages)
    if not turns:
        raise InvalidInputError(
            "Anthropic needs at least one user message besides the system prompt",
            field="$.messages",
        )
    if trailing_user_message is not None and turns[-1]["role"] == "assistant":
        turns.append({"role": "user", "content": [{"type": "text", "text": trailing_user_message}]})
    body: dict[str, Any] = {"model": model, "messages": turns, "stream": True}
    if system:
        body["system"] = _system_blocks(inputs) if inputs.system_cache else "\n\n".join(system)
    if inputs.reasoning_on and not _loop_started_without_thinking(turns):
        if inputs.temperature is not None:
            raise InvalidInputError(
                "Anthropic does not accept temperature with extended thinking; leave it unset "
                "or turn reasoning off",
                field="$.temperature",
            )
        if inputs.top_p is not None and inputs.top_p < 0.95:
            raise InvalidInputError(
                f"with extended thinking Anthropic accepts top_p from 0.95 to 1; got {inputs.top_p}",
                field="$.top_p",
            )
        body["thinking"], body["max_tokens"] = _thinking(inputs, model, max_tokens)
        if body["thinking"]["type"] == "adaptive":
            body["output_config"] = {"effort": _adaptive_effort(inputs.effort)}
    else:
        body["max_tokens"] = inputs.max_tokens or max_tokens
    if inputs.temperature is not None:
        if inputs.temperature > 1.0:
            raise InvalidInputError(
                f"Anthropic accepts temperature from 0 to 1; got {inputs.temperature}",
                field="$.temperature",
            )
        body["temperature"] = inputs.temperature
    if inputs.top_p is not None:
        body["top_p"] = inputs.top_p
    if inputs.stop:
        body["stop_sequences"] = list(inputs.stop)
    if inputs.tools or inputs.provider_tools:
        check_server_tools(inputs.provider_tools, server_tools)
        body["tools"] = [tool_declaration(tool.function) for tool in inputs.tools] + [
            dict(tool) for tool in inputs.provider_tools
        ]
    if inputs.tools:
        if inputs.tool_choice != "auto":
            body["tool_choice"] = _tool_choice(inputs)
            if "thinking" in body and inputs.tool_choice != "none":
                raise InvalidInputError(
                    "Anthropic does not force a tool call while the model thinks: turn "
                    "reasoning off, or leave tool_choice 'auto'",
                    field="$.tool_choice",
                )
    if inputs.output_schema is not None:
        output_config = body.setdefault("output_config", {})
        output_config["format"] = {"type": "json_schema", "schema": inputs.output_schema}
    if inputs.prompt_cache is not None:  # Anthropic's automatic caching: up to the last block
        body["cache_control"] = {"type": "ephemeral", "ttl": inputs.prompt_cache.ttl}
    if inputs.speed is not None:
        body["speed"] = inputs.speed
    _check_cache_marks(body)
    return body


#: What ``POST /v1/messages/count_tokens`` takes of a Messages body: the prompt and what
#: shapes it (it refuses ``max_tokens``, ``stream`` and the sampling settings).
COUNTED_KEYS = frozenset(
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


def build_count_request(inputs: InferInput, *, model: str, **settings: Any) -> dict[str, Any]:
    """The ``POST /v1/messages/count_tokens`` body for ``inputs``: `build_request`'s (with
    the same ``settings``), less what the count endpoint refuses, so it counts the prompt
    ``infer`` would send."""
    body = build_request(inputs, model=model, **settings)
    return {key: value for key, value in body.items() if key in COUNTED_KEYS}


def counted_tokens(reply: Any) -> int:
    """``input_tokens`` of a count_tokens reply."""
    count = reply.get("input_tokens") if isinstance(reply, dict) else None
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ProviderProtocolError(
            "Anthropic's count_tokens reply carries no input_tokens count", provider=PROVIDER
        )
    return count


def _tool_choice(inputs: InferInput) -> dict[str, Any]:
    """``tool_choice`` in Anthropic's shape (``any`` is OpenAI's ``required``)."""
    if inputs.forced_tool is not None:
        return {"type": "tool", "name": inputs.forced_tool}
    return {"type": "any" if inputs.tool_choice == "required" else "none"}


def _adaptive_effort(effort: str | None) -> str:
    """Adaptive thinking's ``output_config.effort`` has no "minimal"; its lowest is "low"."""
    if effort is None:
        return DEFAULT_EFFORT
    return "low" if effort == "minimal" else effort


def check_server_tools(tools: list[dict[str, Any]], allowed: frozenset[str] | None) -> None:
    """Refuse a server tool (Anthropic runs it: ``{"type": "web_search_20250305", "name":
    "web_search", ...}``) with no name, or one the host's ``allowed`` types (an entry
    ``web_search`` allows every version, ``web_search_20250305`` that one) leave out."""
    for index, tool in enumerate(tools):
        kind = str(tool.get("type"))
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            raise InvalidInputError(
                f"Anthropic's {kind} tool needs its name", field=f"$.provider_tools[{index}].name"
            )
        if allowed is not None and not any(
            kind == entry or kind.startswith(entry + "_") for entry in allowed
        ):
            raise InvalidInputError(
                f"the host allows no {kind} tool here (server_tools: "
                f"{', '.join(sorted(allowed)) or 'none'})",
                field=f"$.provider_tools[{index}].type",
            )


def tool_declaration(function: Any) -> dict[str, Any]:
    schema = dict(function.parameters) if function.parameters else {}
    schema.setdefault("type", "object")
    out: dict[str, Any] = {"name": function.name, "input_schema": schema}
    if function.description:
        out["description"] = function.description
    return out


# -- errors ----------------------------------------------------------------------------

#: The HTTP status each error type comes with (an ``event: error`` mid-stream has only
#: the type; its typed error is the one the same failure gets as an HTTP reply).
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def parse_error_body(body: Any) -> tuple[str | None, str | None]:
    """``(error type, message)`` from an Anthropic error body, each None if absent."""
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None, None
    if not isinstance(body, dict):
        return None, None
    error = body.get("error")
    if not isinstance(error, dict):
        return None, None
    kind = error.get("type")
    message = error.get("message")
    return (kind if isinstance(kind, str) else None, message if isinstance(message, str) else None)


def parse_error(status: int, body: bytes, headers: Any) -> ProviderErrorInfo:
    """`ferrule_kit.network.http`'s error parser for Anthropic: a ``billing_error`` is never retried."""
    kind, message = parse_error_body(body)
    if message is None:
        return parse_generic_error(status, body, headers)
    return ProviderErrorInfo(message=message, type=kind, quota=kind == "billing_error")


def stream_error(error: Any) -> ModelError:
    """The typed error for an ``event: error`` that ends a stream: the class the same
    failure gets as an HTTP reply (``overloaded_error`` as a 529, ...)."""
    kind, message = parse_error_body({"error": error})
    info = ProviderErrorInfo(
        message=message or "no message", type=kind, quota=kind == "billing_error"
    )
    typed = provider_error(PROVIDER, ERROR_STATUS.get(kind or ""), info)
    cls = QuotaExceededError if info.quota else type(typed)
    return cls(
        f"{PROVIDER}: the stream ended with {kind or 'an error'}: {info.message}",
        **{**typed.details, "status": None, "mid_stream": True},
    )
