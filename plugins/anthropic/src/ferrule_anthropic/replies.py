"""Anthropic's streamed reply, translated: `StreamTranslator` turns the named SSE events of
``POST /v1/messages`` into ferrule's stream items (`ferrule_kit.models.lm` delta builders).
Pure, no I/O; the request side is `ferrule_anthropic.wire`.

A server tool's work (a ``server_tool_use`` block, its input streamed as for a tool call,
and the ``*_tool_result`` block Anthropic answers it with) is not ours to run: each block,
whole, becomes a reasoning part with no text whose signature carries it
(`SERVER_BLOCK_PREFIX`), so the run keeps it and the next turn sends it back as it came.
The text the model writes about it is text as ever."""

from __future__ import annotations

import json
from typing import Any

from ferrule_kit.errors import ProviderProtocolError, StreamInterruptedError
from ferrule_kit.models.lm import Usage, finish, reasoning_delta, text_delta, tool_call_delta

from .wire import PROVIDER, REDACTED_PREFIX, SERVER_BLOCK_PREFIX, stream_error

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


class StreamTranslator:
    """Turns Anthropic's named stream events into ferrule stream items.

    Feed each event with `feed(name, data)`; it returns the items to yield (often none).
    Usage: input tokens come from ``message_start`` (plus cache reads and writes);
    ``message_delta.usage`` is cumulative, so its counts replace, never add.
    """

    def __init__(self) -> None:
        self.input_tokens = 0
        self.output_tokens = 0
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None  # the stop string that matched, if one did
        self.finished = False
        self._tool_index: dict[int, int] = {}  # content block index -> tool-call ordinal
        self._server: dict[int, dict[str, Any]] = {}  # a server tool's blocks, by index
        self._server_input: dict[int, str] = {}  # their streamed input, by index
        self._blocks: set[int] = set()  # every content block index started

    def feed(self, event: str | None, data: Any) -> list[dict[str, Any]]:
        if not isinstance(data, dict):
            raise ProviderProtocolError(
                f"Anthropic sent a malformed {event or 'stream'} event (not a JSON object)",
                provider=PROVIDER,
            )
        kind = data.get("type", event)
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None or kind == "ping":
            return []  # new event types may be added; Anthropic says to ignore them
        try:
            return handler(data)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ProviderProtocolError(
                f"Anthropic sent a malformed {kind} event ({type(exc).__name__}: {exc})",
                provider=PROVIDER,
            ) from None

    def _on_message_start(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        self._take_usage(data["message"].get("usage") or {})
        return []

    def _take_usage(self, usage: dict[str, Any]) -> None:
        if "input_tokens" in usage:
            self.input_tokens = sum(
                usage.get(k) or 0
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
        if "output_tokens" in usage:
            self.output_tokens = usage["output_tokens"] or 0

    def _on_content_block_start(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        index, block = data["index"], data["content_block"]
        kind = block["type"]
        self._blocks.add(index)
        if kind == "text":
            return [text_delta(block["text"])] if block.get("text") else []
        if kind == "thinking":
            return [reasoning_delta(block["thinking"])] if block.get("thinking") else []
        if kind == "redacted_thinking":
            return [reasoning_delta("", signature=REDACTED_PREFIX + block["data"])]
        if kind == "tool_use":
            ordinal = self._tool_index[index] = len(self._tool_index)
            return [tool_call_delta(ordinal, id=block["id"], name=block["name"])]
        if kind in ("server_tool_use", "mcp_tool_use") or kind.endswith("_tool_result"):
            self._server[index] = dict(block)
            self._server_input[index] = ""
        return []

    def _on_content_block_delta(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        delta = data["delta"]
        kind = delta["type"]
        if kind == "text_delta":
            return [text_delta(delta["text"])]
        if kind == "thinking_delta":
            return [reasoning_delta(delta["thinking"])]
        if kind == "signature_delta":
            return [reasoning_delta("", signature=delta["signature"])]
        if kind == "input_json_delta":
            ordinal = self._tool_index.get(data["index"])
            if ordinal is None:
                if data["index"] in self._server:  # a server tool's input: kept with its block
                    self._server_input[data["index"]] += delta["partial_json"]
                    return []
                if data["index"] in self._blocks:
                    return []
                raise ProviderProtocolError(
                    f"Anthropic sent tool input for block {data['index']}, which was never started",
                    provider=PROVIDER,
                )
            fragment = delta["partial_json"]
            return [tool_call_delta(ordinal, arguments=fragment)] if fragment else []
        return []  # citations_delta and future delta types

    def _on_content_block_stop(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        block = self._server.pop(data["index"], None)
        if block is None:
            return []
        streamed = self._server_input.pop(data["index"])
        if streamed:
            try:
                block["input"] = json.loads(streamed)
            except json.JSONDecodeError:
                raise ProviderProtocolError(
                    f"Anthropic sent {block.get('name', 'a server tool')}'s input as malformed JSON",
                    provider=PROVIDER,
                ) from None
        return [reasoning_delta("", signature=SERVER_BLOCK_PREFIX + json.dumps(block))]

    def _on_message_delta(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        delta = data.get("delta") or {}
        if delta.get("stop_reason") is not None:
            self.stop_reason = delta["stop_reason"]
        if isinstance(delta.get("stop_sequence"), str):
            self.stop_sequence = delta["stop_sequence"]
        self._take_usage(data.get("usage") or {})
        return []

    def _on_message_stop(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        self.finished = True
        matched = self.stop_sequence if self.stop_reason == "stop_sequence" else None
        return [finish(self.finish_reason, self.usage, stop_sequence=matched)]

    def _on_error(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        raise stream_error(data.get("error"))

    @property
    def finish_reason(self) -> Any:
        if self.stop_reason is None:
            return "tool_calls" if self._tool_index else "stop"
        return STOP_REASONS.get(self.stop_reason, "stop")

    @property
    def usage(self) -> Usage:
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens)

    def check_complete(self) -> None:
        """Raise if the stream ended (connection closed) before ``message_stop``."""
        if not self.finished:
            raise StreamInterruptedError(
                "Anthropic's stream ended before message_stop (connection closed mid-reply)",
                provider=PROVIDER,
                status=None,
            )
