"""ferrule-gemini against the LM contract's conformance suite: the ``gemini`` component of
conftest.py, each turn scripted as whole-response records on its validating loopback."""

from __future__ import annotations

import pytest
from ferrule.testing import AgentConformance
from ferrule_gemini.testing import reply_records, stream_reply
from ferrule_kit.testing import Capabilities, LanguageModelConformance, LanguageModelUnderTest

FINISH_REASONS = {
    "stop": "STOP",
    "length": "MAX_TOKENS",
    "tool_calls": "STOP",
    "content_filter": "SAFETY",
}


class TestGeminiConformance(LanguageModelConformance, AgentConformance):
    @pytest.fixture
    def lm(self, gemini):
        ids: dict[str, str] = {}

        def script(turn, inputs) -> None:
            records = reply_records(
                text=turn.text,
                reasoning=turn.reasoning,
                tool_calls=[(c.name, c.arguments) for c in turn.tool_calls],
                finish_reason=FINISH_REASONS[turn.finish_reason],
            )
            # Gemini may send call ids; the suite's scripted ids come back as sent.
            calls = [
                p["functionCall"]
                for r in records
                for p in r["candidates"][0]["content"]["parts"]
                if "functionCall" in p
            ]
            for call, expected in zip(calls, turn.tool_calls, strict=True):
                call["id"] = ids.setdefault(expected.id, expected.id)
            gemini.server.script(stream_reply(records, delay=turn.chunk_delay))

        capabilities = Capabilities(reasoning=True, output_schema=True, images=True, audio=True)
        return LanguageModelUnderTest(gemini.runtime, gemini.name, capabilities, script=script)
