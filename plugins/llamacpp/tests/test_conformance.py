"""The language-model conformance suite of `ferrule_kit.testing`, on the shipped SmolLM2 model."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from ferrule import Runtime
from ferrule.testing import AgentConformance
from ferrule_kit.testing import Capabilities, LanguageModelConformance, LanguageModelUnderTest

# SmolLM2 takes tools in its function-calling format (its calls are one JSON list, so
# several at once); no reasoning, no media (refused with a typed error, which the suite
# checks); output_schema is enforced by a grammar.
CAPABILITIES = Capabilities(
    tools=True, parallel_tool_calls=True, reasoning=False, output_schema=True
)


@pytest.fixture(scope="module")
def component(rt: Runtime, smollm2_gguf: Path) -> str:
    # A reply limit keeps an unconstrained 135M model from rambling to its context's end.
    rt.define("llamacpp_language_model", "conformance", {"max_tokens": 96, "seed": 1})
    return "conformance"


class TestSmolLM2Conformance(LanguageModelConformance, AgentConformance):
    @pytest.fixture
    def lm(self, rt: Runtime, component: str) -> LanguageModelUnderTest:
        # The suite streams with `async for`: give it the Runtime's async face.
        runtime = types.SimpleNamespace(call_iter_method=rt.acall_iter_method)
        return LanguageModelUnderTest(runtime, component, CAPABILITIES)
