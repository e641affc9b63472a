"""Ailoy 0.1's raw ``claude`` type (`ferrule_kit.ailoy_models`) on this plugin's model, against a
loopback server speaking the provider's wire (every request validated): the kit's suite.
Ailoy sent it to Anthropic's OpenAI-compatible endpoint; this one speaks the Messages API
with the same key, and answers in the same shape."""

from __future__ import annotations

import pytest
from ferrule import AsyncRuntime
from ferrule_anthropic.testing import validator
from ferrule_kit.parts import ANTHROPIC
from ferrule_kit.testing.ailoy_models import AiloyAPIModelConformance, AiloyAPIModelUnderTest
from ferrule_kit.testing.loopback import LoopbackServer


class TestAiloyClaude(AiloyAPIModelConformance):
    @pytest.fixture
    async def ailoy(self, monkeypatch):
        async with LoopbackServer(validate=validator) as server, AsyncRuntime() as rt:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            yield AiloyAPIModelUnderTest(
                rt, server, "claude", "claude-sonnet-4-20250514", ANTHROPIC
            )
