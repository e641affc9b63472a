"""Loopback providers of every wire dialect, for the tests of content plugins.

A content plugin encodes its parts for wire dialects (`ferrule_kit.content.parts`); its tests check
the parts as each provider sends them. Plugins never import each other, so a test reaches
a provider through a Runtime by its component type name (the provider is installed by the
test extra), pointed at a `ferrule_kit.testing.loopback.LoopbackServer`::

    from ferrule_kit.testing.dialects import PROVIDERS, send

    @pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
    async def test_reaches_every_provider(provider, monkeypatch):
        async with LoopbackServer() as server, AsyncRuntime() as rt:
            sent = await send(rt, server, provider, [part], monkeypatch)
        assert sent[-1] == ...  # the part as the provider's wire has it

`PROVIDERS` are this repository's API providers, one per dialect (OpenAI's own API and an
OpenAI-compatible server are both ``openai_language_model``); `reply` answers a request
with a short text in each dialect's streaming shape. The providers' own test kits check
their requests in full; this one only carries parts there and back.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

import attrs

from ferrule_kit.content.messages import ToolCall
from ferrule_kit.content.parts import ANTHROPIC, GEMINI, OPENAI, OPENAI_COMPATIBLE

from . import chat_completions
from .conformance import ScriptedTurn
from .loopback import LoopbackServer, RecordedRequest, Reply, sse

__all__ = ["PROVIDERS", "LoopbackProvider", "reply", "send", "user_content"]


@attrs.frozen
class LoopbackProvider:
    """How to define one provider's language model against a loopback server."""

    name: str
    component_type: str
    model: str
    dialect: str
    #: Appended to the server's URL for ``base_url``.
    path: str = ""
    #: Environment variables to set, given the server's URL (OpenAI's official dialect is
    #: OpenAI's endpoint, moved with ``OPENAI_BASE_URL``; ``base_url`` would make it a
    #: compatible server).
    environment: Mapping[str, str] = attrs.field(factory=dict)

    def attributes(self, url: str) -> dict[str, Any]:
        attributes: dict[str, Any] = {"model": self.model, "api_key": "test-key", "max_retries": 0}
        if not self.environment:
            attributes["base_url"] = url + self.path
        return attributes


PROVIDERS: tuple[LoopbackProvider, ...] = (
    LoopbackProvider(
        "openai",
        "openai_language_model",
        "gpt-4o",
        OPENAI,
        environment={"OPENAI_BASE_URL": "{url}/v1"},
    ),
    LoopbackProvider(
        "openai-compatible", "openai_language_model", "local-model", OPENAI_COMPATIBLE, "/v1"
    ),
    LoopbackProvider("xai", "xai_language_model", "grok-4", OPENAI_COMPATIBLE, "/v1"),
    LoopbackProvider("anthropic", "anthropic_language_model", "claude-sonnet-4-5", ANTHROPIC),
    LoopbackProvider("gemini", "gemini_language_model", "gemini-2.5-flash", GEMINI, "/v1beta"),
)


def reply(dialect: str, text: str = "ok", tool_calls: tuple[ToolCall, ...] = ()) -> Reply:
    """A streamed reply of ``text`` in ``dialect``'s wire shape; with ``tool_calls``, a
    reply that calls those tools instead (its finish reason says so)."""
    if dialect in (OPENAI, OPENAI_COMPATIBLE):
        if tool_calls:
            return chat_completions.reply(
                ScriptedTurn(tool_calls=tool_calls, finish_reason="tool_calls")
            )
        return chat_completions.reply(ScriptedTurn(text=(text,)))
    if dialect == ANTHROPIC:
        blocks: list[tuple[dict[str, Any], dict[str, Any]]] = [
            (
                {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
                {"type": "input_json_delta", "partial_json": json.dumps(call.arguments)},
            )
            for call in tool_calls
        ] or [({"type": "text", "text": ""}, {"type": "text_delta", "text": text})]
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {"message": {"id": "msg_1", "role": "assistant", "content": [], "usage": {}}},
            )
        ]
        for index, (start, delta) in enumerate(blocks):
            events += [
                ("content_block_start", {"index": index, "content_block": start}),
                ("content_block_delta", {"index": index, "delta": delta}),
                ("content_block_stop", {"index": index}),
            ]
        stop = "tool_use" if tool_calls else "end_turn"
        events += [
            ("message_delta", {"delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}}),
            ("message_stop", {}),
        ]
        return Reply.sse([sse({"type": name, **data}, event=name) for name, data in events])
    if dialect == GEMINI:
        parts: list[dict[str, Any]] = [
            {"functionCall": {"name": call.name, "args": call.arguments}} for call in tool_calls
        ] or [{"text": text}]
        record = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]
        }
        return Reply.sse([sse(record, newline="\r\n")])
    raise ValueError(f"no loopback reply for dialect {dialect!r}")


def _reply_to(request: RecordedRequest) -> Reply:
    # Chosen by the request's path, so a reply left queued by a send that was refused
    # before any request answers the next send whatever its dialect.
    if request.path.endswith("/messages"):
        return reply(ANTHROPIC)
    if ":streamGenerateContent" in request.path:
        return reply(GEMINI)
    return reply(OPENAI)


def user_content(dialect: str, body: Mapping[str, Any]) -> Any:
    """The last user message's content as a request body of ``dialect`` carries it (a
    string where the provider sent plain text)."""
    if dialect == GEMINI:
        return body["contents"][-1]["parts"]
    return body["messages"][-1]["content"]


async def send(
    runtime: Any,
    server: LoopbackServer,
    provider: LoopbackProvider,
    content: list[dict[str, Any]],
    monkeypatch: Any,
) -> Any:
    """Send one user message of wire parts ``content`` to ``provider`` on ``server``
    through ``runtime`` (an `AsyncRuntime`) and return its content as it arrived there."""
    for key, value in provider.environment.items():
        monkeypatch.setenv(key, value.format(url=server.url))
    name = f"{provider.name}-{uuid.uuid4().hex[:8]}"
    await runtime.define(provider.component_type, name, provider.attributes(server.url))
    server.script(_reply_to)
    try:
        inputs = {"messages": [{"role": "user", "content": content}]}
        async for _ in runtime.call_iter_method(name, "infer", inputs):
            pass
    finally:
        await runtime.delete(name)
    return user_content(provider.dialect, server.requests[-1].json)
