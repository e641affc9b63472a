"""Test kits of the top layer, for plugin authors whose backend should also work under
an `Agent` (needs ``pip install 'ferrule[testing]'``).

`AgentConformance` adds the Agent's end-to-end tool round trip to
`ferrule_kit.testing.LanguageModelConformance`; a backend's test class takes both::

    class TestMyBackendConformance(LanguageModelConformance, AgentConformance): ...

It lives here, not in the kit, because the kit sits below the Agent.
"""

from __future__ import annotations

from typing import Any

import pytest
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.models.lmspec import ModelRoute
from ferrule_kit.testing import LanguageModelUnderTest, ScriptedTurn

from .agent import Agent, LangModel

__all__ = ["AgentConformance"]


class AgentConformance:
    """The Agent on a backend: mix into a `LanguageModelConformance` subclass (it uses the
    same ``lm`` fixture)."""

    async def test_agent_runs_a_tool_through_this_backend(self, lm: LanguageModelUnderTest) -> None:
        """End to end: an `Agent` on this component calls a Python tool, sends its result
        back in this backend's wire format, and streams the final answer."""
        if not (lm.scripted and lm.capabilities.tools):
            pytest.skip("needs a scripted backend that takes tools")
        calls: list[str] = []

        def get_weather(city: str) -> dict[str, Any]:
            """Current weather in a city.

            Args:
                city: The city name.
            """
            calls.append(city)
            return {"city": city, "temp": 3}

        call = ToolCall(id="call_agent_1", name="get_weather", arguments={"city": "Oslo"})
        await lm.expect(ScriptedTurn(tool_calls=(call,), finish_reason="tool_calls"), {})
        answer = ScriptedTurn(text=("It is 3°C ", "in Oslo."))
        await lm.expect(answer, {})
        model = LangModel(lm.runtime, lm.component, ModelRoute("", {}))
        agent = Agent(model, tools=[get_weather])
        responses = [r async for r in agent.aquery("What is the weather in Oslo?")]

        assert calls == ["Oslo"]
        types = [r.type for r in responses]
        assert types[0] == "tool_call" and "tool_call_result" in types, types
        assert types[-1] == "output_text", types
        assert [r.is_type_switched for r in responses] == [
            i == 0 or types[i] != types[i - 1] for i in range(len(types))
        ]
        result = next(r for r in responses if r.type == "tool_call_result")
        assert result.role == "tool" and result.content["result"] == {"city": "Oslo", "temp": 3}
        text = "".join(r.content for r in responses if r.type == "output_text")
        assert text == answer.full_text
        history = agent.get_messages()
        assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
