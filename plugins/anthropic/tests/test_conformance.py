"""ferrule-anthropic against the LM contract's conformance suite, each turn streamed by a
loopback server in Anthropic's wire format (every request validated)."""

from __future__ import annotations

import pytest
from ferrule import AsyncRuntime
from ferrule.testing import AgentConformance
from ferrule_anthropic.testing import message_events, stream_reply, validator
from ferrule_kit.testing import Capabilities, LanguageModelConformance, LanguageModelUnderTest
from ferrule_kit.testing.loopback import LoopbackServer

STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}


class TestAnthropicConformance(LanguageModelConformance, AgentConformance):
    @pytest.fixture
    async def lm(self):
        async with LoopbackServer(validate=validator) as server, AsyncRuntime() as rt:

            def script(turn, inputs) -> None:
                events = message_events(
                    text=turn.text,
                    reasoning=turn.reasoning,
                    tool_calls=[(c.id, c.name, c.arguments) for c in turn.tool_calls],
                    stop_reason=STOP_REASONS[turn.finish_reason],
                )
                server.script(stream_reply(events, delay=turn.chunk_delay))

            await rt.define(
                "anthropic_language_model",
                "claude",
                {
                    "model": "claude-sonnet-4-20250514",
                    "api_key": "sk-ant-conformance",
                    "base_url": server.url,
                },
            )
            capabilities = Capabilities(
                reasoning=True, output_schema=True, images=True, image_urls=True
            )
            yield LanguageModelUnderTest(rt, "claude", capabilities, script=script)
