"""`AiloyAPIModelConformance`: Ailoy 0.1's raw API-model types (``openai``, ``gemini``,
``claude``, ``grok``; `ferrule_kit.ailoy_models`) as a test suite, for the provider plugin
that registers one with `ferrule_kit.lmspec.ailoy_api_model_type`.

Subclass it with an ``ailoy`` fixture giving an `AiloyAPIModelUnderTest`: an `AsyncRuntime`,
a started `ferrule_kit.testing.loopback.LoopbackServer` (with the provider's request
validator) that the provider's base-URL variable points at (Ailoy's types take no
``base_url``), the type's name, a model id and the provider's wire dialect::

    class TestAiloyOpenAI(AiloyAPIModelConformance):
        @pytest.fixture
        async def ailoy(self, monkeypatch):
            async with LoopbackServer(validate=validator()) as server, AsyncRuntime() as rt:
                monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
                yield AiloyAPIModelUnderTest(rt, server, "openai", "gpt-4o", OPENAI)

Checked, through the kernel's requests, each reply streamed by the loopback server in the
provider's own wire shape (`ferrule_kit.testing.dialects.reply`): ``infer`` yields exactly
one item, ``{message, finish_reason}``, the message ``role`` ``assistant`` with its text as
a string; content given as a string or as parts; a request with tools whose reply calls
one (``tool_calls`` in OpenAI's shape, arguments an object, ``finish_reason``
``tool_calls``); the next turn with OpenAI's history of it (arguments a JSON string, a
``tool`` message); ``api_key`` and ``model`` required and ``messages`` too, each refusal
naming its field; the key sent to the provider and nowhere else (reprs, the component
list, a provider's refusal, debug logs).
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from ferrule_kernel import FerruleError, InvalidInputError, configure_logging

from ..messages import ToolCall
from .dialects import reply
from .loopback import LoopbackServer, Reply

__all__ = ["WEATHER", "AiloyAPIModelConformance", "AiloyAPIModelUnderTest"]

#: A key for the suite; it must reach the provider and nothing else.
KEY = "sk-ailoy-LOOPBACK-secret-0123456789abcdef"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
QUESTION = {"role": "user", "content": "Who was the president of the US in 2021?"}


@attrs.frozen
class AiloyAPIModelUnderTest:
    """What a subclass's ``ailoy`` fixture gives (see the module docstring)."""

    runtime: Any
    server: LoopbackServer
    #: The Ailoy type's name: ``openai``, ``gemini``, ``claude`` or ``grok``.
    component_type: str
    model: str
    #: The provider's wire dialect (`ferrule_kit.parts`), for the scripted replies.
    dialect: str

    async def define(self, name: str = "ailoy") -> str:
        await self.runtime.define(self.component_type, name, {"api_key": KEY, "model": self.model})
        return name

    async def infer(self, name: str, inputs: dict[str, Any]) -> list[dict[str, Any]]:
        return [item async for item in self.runtime.call_iter_method(name, "infer", inputs)]


def _paths(error: InvalidInputError) -> list[str]:
    return [entry["path"] for entry in error.errors]


class AiloyAPIModelConformance:
    """The suite; see the module docstring. Override the ``ailoy`` fixture."""

    @pytest.fixture
    def ailoy(self) -> AiloyAPIModelUnderTest:
        pytest.fail("an AiloyAPIModelConformance subclass must override the 'ailoy' fixture")

    async def test_infer_yields_one_item_with_the_reply_as_a_string(
        self, ailoy: AiloyAPIModelUnderTest
    ) -> None:
        name = await ailoy.define()
        ailoy.server.script(reply(ailoy.dialect, "Joe Biden"))
        items = await ailoy.infer(name, {"messages": [QUESTION]})
        assert len(items) == 1
        (item,) = items
        assert item["finish_reason"] == "stop"
        assert item["message"]["role"] == "assistant"
        assert item["message"]["content"] == "Joe Biden"
        assert "tool_calls" not in item["message"]
        sent = ailoy.server.requests[-1].body.decode()
        assert "president of the US in 2021" in sent and ailoy.model in (
            sent + ailoy.server.requests[-1].path
        )

    async def test_content_as_parts_and_a_system_message_are_taken(
        self, ailoy: AiloyAPIModelUnderTest
    ) -> None:
        name = await ailoy.define()
        ailoy.server.script(reply(ailoy.dialect, "Paris"))
        messages = [
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": [{"type": "text", "text": "The capital of France?"}]},
        ]
        (item,) = await ailoy.infer(name, {"messages": messages})
        assert item["message"]["content"] == "Paris"
        sent = ailoy.server.requests[-1].body.decode()
        assert "Answer in one word." in sent and "The capital of France?" in sent

    async def test_a_reply_calling_a_tool(self, ailoy: AiloyAPIModelUnderTest) -> None:
        name = await ailoy.define()
        call = ToolCall("call_w1", "get_weather", {"city": "Seoul"})
        ailoy.server.script(reply(ailoy.dialect, tool_calls=(call,)))
        question = {"role": "user", "content": "What is the weather in Seoul?"}
        (item,) = await ailoy.infer(name, {"messages": [question], "tools": [WEATHER]})
        assert item["finish_reason"] == "tool_calls"
        message = item["message"]
        assert message["role"] == "assistant" and "content" not in message
        (called,) = message["tool_calls"]
        assert called["type"] == "function" and isinstance(called["id"], str) and called["id"]
        assert called["function"] == {"name": "get_weather", "arguments": {"city": "Seoul"}}
        assert "get_weather" in ailoy.server.requests[-1].body.decode()  # the tool was offered

    async def test_the_turn_after_a_tool_call_is_answered(
        self, ailoy: AiloyAPIModelUnderTest
    ) -> None:
        name = await ailoy.define()
        ailoy.server.script(reply(ailoy.dialect, "It is sunny in Seoul."))
        messages = [
            {"role": "user", "content": "What is the weather in Seoul?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_w1",
                        "type": "function",
                        # OpenAI's history carries arguments as a JSON string
                        "function": {"name": "get_weather", "arguments": '{"city": "Seoul"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_w1", "content": '{"sky": "sunny"}'},
        ]
        (item,) = await ailoy.infer(name, {"messages": messages, "tools": [WEATHER]})
        assert (item["finish_reason"], item["message"]["content"]) == (
            "stop",
            "It is sunny in Seoul.",
        )
        sent = ailoy.server.requests[-1].body.decode()
        assert "Seoul" in sent and "sunny" in sent  # the call and its result went along

    async def test_define_takes_ailoy_s_attributes_naming_a_bad_one(
        self, ailoy: AiloyAPIModelUnderTest
    ) -> None:
        refused = {
            "$.api_key": {"model": ailoy.model},
            "$.model": {"api_key": KEY},
            "$.base_url": {"api_key": KEY, "model": ailoy.model, "base_url": "http://x"},
        }
        for path, attributes in refused.items():
            with pytest.raises(InvalidInputError) as info:
                await ailoy.runtime.define(ailoy.component_type, "refused", attributes)
            assert _paths(info.value) == [path]
            assert KEY not in json.dumps(info.value.to_dict())
        with pytest.raises(InvalidInputError) as info:
            await ailoy.runtime.define(
                ailoy.component_type, "refused", {"api_key": "", "model": ailoy.model}
            )
        assert _paths(info.value) == ["$.api_key"]
        assert "refused" not in ailoy.runtime.kernel.components()
        assert ailoy.server.requests == []  # nothing was sent

    async def test_infer_without_messages_names_the_field(
        self, ailoy: AiloyAPIModelUnderTest
    ) -> None:
        name = await ailoy.define()
        refused: list[dict[str, Any]] = [{}, {"messages": []}, {"messages": "hello"}]
        for inputs in refused:
            with pytest.raises(InvalidInputError) as info:
                await ailoy.infer(name, inputs)
            assert _paths(info.value) == ["$.messages"], inputs
        assert ailoy.server.requests == []

    async def test_the_key_reaches_the_provider_and_nothing_else(
        self, ailoy: AiloyAPIModelUnderTest, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(debug=True)
        try:
            name = await ailoy.define()
            ailoy.server.script(reply(ailoy.dialect, "Joe Biden"))
            await ailoy.infer(name, {"messages": [QUESTION]})
            refusal = {
                "type": "error",
                "error": {
                    "type": "authentication_error",
                    "code": 401,
                    "status": "UNAUTHENTICATED",
                    "message": "invalid x-api-key",
                },
            }
            ailoy.server.script(Reply.json(refusal, status=401))
            with pytest.raises(FerruleError) as info:
                await ailoy.infer(name, {"messages": [QUESTION]})
        finally:
            configure_logging(debug=False)
        sent = ailoy.server.requests[0]
        assert any(KEY in value for value in [*sent.headers.values(), *sent.query.values()])
        component = ailoy.runtime.kernel.component(name)
        seen = [
            repr(component),
            str(ailoy.runtime.kernel.components()),
            json.dumps(info.value.to_dict()),
            repr(info.value),
            capsys.readouterr().err,
        ]
        for text in seen:
            assert KEY not in text and KEY[-12:] not in text
