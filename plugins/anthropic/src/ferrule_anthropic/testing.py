"""A loopback Anthropic for tests: what a valid Messages request looks like, checked the
way the API checks it, and replies in Anthropic's streaming wire format.

`request_problems` lists everything wrong with a ``POST /v1/messages`` request (headers
and JSON body; a ``POST /v1/messages/count_tokens`` one with ``counting=True``) per
Anthropic's documentation (protocols.md §3.3): required fields, block shapes per role,
tool_use / tool_result pairing, thinking rules, cache breakpoints (from
`ferrule_anthropic.request_checks`). `validator` makes it a `ferrule_kit.testing.loopback`
validator, so a malformed request is answered 400 and fails the test. `message_events` builds the named events of a reply (text, thinking with its
signature, redacted thinking, tool calls with their input split in fragments, stop reason,
usage), `stream_reply` turns events into a scripted SSE reply and `count_reply` answers a
count. Use them to test your own code against a loopback Anthropic.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ferrule_kit.testing.loopback import Action, Pause, Reply, sse

from .request_checks import ANTHROPIC_VERSION, request_problems, validator

__all__ = [
    "ANTHROPIC_VERSION",
    "count_reply",
    "error_body",
    "error_reply",
    "event_bytes",
    "message_events",
    "request_problems",
    "stream_reply",
    "validator",
]

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
    server_tools: Sequence[tuple[str, str, Any, dict[str, Any]]] = (),
    stop_reason: str | None = None,
    stop_sequence: str | None = None,
    input_tokens: int = 12,
    output_tokens: int | None = None,
    model: str = "claude-loopback",
    split_json: Callable[[str], list[str]] = _fragments,
) -> list[Event]:
    """The named events of one streamed reply, in Anthropic's order: thinking (its deltas,
    then its signature), redacted thinking, each server tool's work (``(id, name, input,
    result block)``: its ``server_tool_use``, input streamed in fragments, then the
    ``*_tool_result`` block), text, then each tool call (``(id, name,
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
    for use_id, name, arguments, result in server_tools:
        use = {"type": "server_tool_use", "id": use_id, "name": name, "input": {}}
        events.append(("content_block_start", {"index": index, "content_block": use}))
        events += [
            (
                "content_block_delta",
                {"index": index, "delta": {"type": "input_json_delta", "partial_json": f}},
            )
            for f in split_json(json.dumps(arguments))
        ]
        events.append(("content_block_stop", {"index": index}))
        events.append(("content_block_start", {"index": index + 1, "content_block": result}))
        events.append(("content_block_stop", {"index": index + 1}))
        index += 2
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
