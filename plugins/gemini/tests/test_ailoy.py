"""Ailoy 0.1's raw ``gemini`` type (`ferrule_kit.ailoy_models`) on this plugin's model, against a
loopback server speaking the provider's wire (every request validated): the kit's suite.
Ailoy sent it to Google's OpenAI-compatible endpoint; this one speaks the Gemini API with
the same key, and answers in the same shape."""

from __future__ import annotations

import pytest
from ferrule import AsyncRuntime
from ferrule_gemini.testing import validator
from ferrule_kit.parts import GEMINI
from ferrule_kit.testing.ailoy_models import AiloyAPIModelConformance, AiloyAPIModelUnderTest
from ferrule_kit.testing.loopback import LoopbackServer


class TestAiloyGemini(AiloyAPIModelConformance):
    @pytest.fixture
    async def ailoy(self, monkeypatch):
        async with LoopbackServer(validate=validator) as server, AsyncRuntime() as rt:
            monkeypatch.setenv("GEMINI_BASE_URL", server.url + "/v1beta")
            yield AiloyAPIModelUnderTest(rt, server, "gemini", "gemini-2.5-flash", GEMINI)
