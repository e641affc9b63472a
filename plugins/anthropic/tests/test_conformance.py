"""ferrule-anthropic against the LM contract's conformance suite: the ``claude`` component of
conftest.py, each turn scripted as Anthropic's named events on its validating loopback."""

from __future__ import annotations

import pytest
from ferrule.testing import AgentConformance
from ferrule_anthropic.testing import message_events, stream_reply
from ferrule_kit.testing import Capabilities, LanguageModelConformance, LanguageModelUnderTest

STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}


class TestAnthropicConformance(LanguageModelConformance, AgentConformance):
    @pytest.fixture
    def lm(self, claude):
        def script(turn, inputs) -> None:
            events = message_events(
                text=turn.text,
                reasoning=turn.reasoning,
                tool_calls=[(c.id, c.name, c.arguments) for c in turn.tool_calls],
                stop_reason=STOP_REASONS[turn.finish_reason],
            )
            claude.server.script(stream_reply(events, delay=turn.chunk_delay))

        capabilities = Capabilities(
            reasoning=True, output_schema=True, images=True, image_urls=True
        )
        return LanguageModelUnderTest(claude.runtime, claude.name, capabilities, script=script)
