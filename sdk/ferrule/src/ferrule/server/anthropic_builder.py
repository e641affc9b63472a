"""Anthropic's Messages format, the reply: ``infer`` items folded into a ``message``
object, step by step as its stream events (`MessageBuilder`), so that a stream and a
plain reply are the same reply. Pure translation: no HTTP here.

Content blocks follow the model's stream: ``thinking`` (its ``signature`` empty when the
model gave none, as a local model does; a redacted one is sent back as
``redacted_thinking``), ``text``, then each ``tool_use``; a block stops when the next one
starts or the stream ends. Stop reasons: ``end_turn``, ``max_tokens``, ``tool_use``,
``refusal`` (a content filter), and ``stop_sequence`` with the string in ``stop_sequence``
where the backend says which stop string ended the reply (the LM contract's
``stop_sequence``); a backend that does not say ends it as ``end_turn``.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

from .anthropic_wire import REDACTED_PREFIX, anthropic_error_body
from .openai_wire import OpenAIError

_STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}


class MessageBuilder:
    """Folds ``infer`` items into a Messages ``message``; `start`, `add` and `finish`
    return the stream events each step makes (``(event name, data)`` pairs)."""

    def __init__(self, model: str) -> None:
        self.id = f"msg_{uuid.uuid4().hex[:24]}"
        self.model = model
        self.content: list[dict[str, Any]] = []
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.usage: dict[str, Any] = {}
        self._open: dict[str, Any] | None = None  # the block being streamed
        self._call_index: int | None = None  # the LM contract's index of the open call
        self._arguments = ""  # the open tool_use block's JSON, parsed when it stops

    def message(self) -> dict[str, Any]:
        """The message object as it stands."""
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": copy.deepcopy(self.content),
            "stop_reason": self.stop_reason,
            "stop_sequence": self.stop_sequence,
            "usage": {
                "input_tokens": self.usage.get("input_tokens", 0),
                "output_tokens": self.usage.get("output_tokens", 0),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def start(self) -> list[tuple[str, dict[str, Any]]]:
        return [("message_start", {"type": "message_start", "message": self.message()}), _PING]

    def _begin(self, block: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        events = self._stop()
        self.content.append(block)
        self._open = block
        index = len(self.content) - 1
        data = {"type": "content_block_start", "index": index, "content_block": copy.copy(block)}
        return [*events, ("content_block_start", data)]

    def _delta(self, delta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        index = len(self.content) - 1
        return (
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": delta},
        )

    def _stop(self) -> list[tuple[str, dict[str, Any]]]:
        block, self._open, self._call_index = self._open, None, None
        if block is None:
            return []
        if block["type"] == "tool_use":
            try:
                block["input"] = json.loads(self._arguments) if self._arguments.strip() else {}
            except json.JSONDecodeError:  # cut by max_tokens: what came, as Anthropic would
                block["input"] = {}
            self._arguments = ""
        index = len(self.content) - 1
        return [("content_block_stop", {"type": "content_block_stop", "index": index})]

    def _kind(self) -> str | None:
        return self._open["type"] if self._open is not None else None

    def add(self, item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The events of one ``infer`` item."""
        events: list[tuple[str, dict[str, Any]]] = []
        message = item["message"]
        for part in message.get("reasoning", ()):
            events += self._reasoning(part.get("text", ""), part.get("signature"))
        text = "".join(p.get("text", "") for p in message.get("content", ()))
        if text:
            if self._kind() != "text":
                events += self._begin({"type": "text", "text": ""})
            assert self._open is not None
            self._open["text"] += text
            events.append(self._delta({"type": "text_delta", "text": text}))
        for call in message.get("tool_calls", ()):
            index = call.get("index", 0)
            function = call.get("function", {})
            if self._kind() != "tool_use" or self._call_index != index:
                block: dict[str, Any] = {
                    "type": "tool_use",
                    "id": call.get("id") or f"toolu_{uuid.uuid4().hex[:24]}",
                    "name": function.get("name") or "",
                    "input": {},
                }
                events += self._begin(block)
                self._call_index = index
            fragment = function.get("arguments", "")
            if fragment:
                self._arguments += fragment
                events.append(self._delta({"type": "input_json_delta", "partial_json": fragment}))
        if item.get("usage") is not None:
            self.usage = item["usage"]
        if item.get("finish_reason") is not None:
            self.stop_reason = _STOP_REASONS.get(item["finish_reason"], "end_turn")
            if item["finish_reason"] == "stop" and isinstance(item.get("stop_sequence"), str):
                self.stop_reason, self.stop_sequence = "stop_sequence", item["stop_sequence"]
        return events

    def _reasoning(self, text: str, signature: str | None) -> list[tuple[str, dict[str, Any]]]:
        events: list[tuple[str, dict[str, Any]]] = []
        if signature is not None and signature.startswith(REDACTED_PREFIX):
            events += self._begin(
                {"type": "redacted_thinking", "data": signature[len(REDACTED_PREFIX) :]}
            )
            return [*events, *self._stop()]
        if not text and signature is None:
            return []
        if self._kind() != "thinking":
            events += self._begin({"type": "thinking", "thinking": "", "signature": ""})
        assert self._open is not None
        if text:
            self._open["thinking"] += text
            events.append(self._delta({"type": "thinking_delta", "thinking": text}))
        if signature is not None:  # a signature ends its thinking block
            self._open["signature"] = signature
            events.append(self._delta({"type": "signature_delta", "signature": signature}))
            events += self._stop()
        return events

    def finish(self) -> list[tuple[str, dict[str, Any]]]:
        """The events that end a stream that ended well."""
        events = self._stop()
        if self.stop_reason is None:
            self.stop_reason = "end_turn"
        usage = self.message()["usage"]
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": self.stop_reason, "stop_sequence": self.stop_sequence},
            "usage": usage,
        }
        return [*events, ("message_delta", delta), ("message_stop", {"type": "message_stop"})]

    def fail(self, error: OpenAIError) -> list[tuple[str, dict[str, Any]]]:
        """The event that ends a stream whose model failed after it started."""
        return [("error", anthropic_error_body(error))]


_PING = ("ping", {"type": "ping"})
