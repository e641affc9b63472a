"""`LanguageModelConformance`: the language-model contract of `ferrule_kit.models.lm` as a test suite
that any backend plugin (ours or a third party's) runs against itself.

Subclass it in your plugin's tests and provide an ``lm`` fixture that yields a
`LanguageModelUnderTest`: a runtime with the component defined, the component's name, the
backend's `Capabilities`, and, for backends whose replies a test can script (an API
provider behind a `ferrule_kit.testing.loopback.LoopbackServer`), a ``script`` callback::

    from ferrule_kit.testing import Capabilities, LanguageModelConformance, LanguageModelUnderTest

    class TestMyBackendConformance(LanguageModelConformance):
        @pytest.fixture
        async def lm(self):
            async with AsyncRuntime() as rt:
                await rt.define("my_language_model", "lm", {...})
                yield LanguageModelUnderTest(rt, "lm", Capabilities(tools=True), script=...)

Before each request a test calls ``script(turn, inputs)`` with the `ScriptedTurn` the model
should produce (text fragments, reasoning, tool calls, finish reason) and the ``infer``
inputs; a scripted harness makes its server stream exactly that in the provider's wire
format, and the suite then checks the items match it exactly. Without ``script`` (a real
model) the suite checks every structural rule and whatever a real model can be held to.

Checked: every item's shape (``content[0]`` always a text part; ``reasoning`` and
``tool_calls`` only when non-empty), exactly one final item, last, with a finish reason
and usage; text streaming; a system message; multi-turn history; tools giving tool-call
deltas with ids (one and several per turn, arguments in fragments); tool results sent
back; reasoning deltas; stop and max_tokens; images and audio, or a refusal with
`UnsupportedContentError` where the backend does not take them; bad input giving
`InvalidInputError` naming the field; an `Agent` on the backend running a tool end to
end (scripted backends); closing a stream early ending it promptly, with the
component still usable after. A capability declared False is skipped with that reason,
except media, whose refusal is itself checked.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import io
import json
import struct
import time
import wave
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest
from ferrule_kernel import InvalidInputError

from ferrule_kit.content.messages import ToolCall
from ferrule_kit.content.parts import registry
from ferrule_kit.errors import UnsupportedContentError
from ferrule_kit.models.lm import MessageAccumulator

__all__ = [
    "Capabilities",
    "LanguageModelConformance",
    "LanguageModelUnderTest",
    "ScriptedTurn",
    "check_stream",
    "tiny_png",
    "tiny_wav",
]

FINISH_REASONS = {"stop", "length", "tool_calls", "content_filter"}


@attrs.frozen
class Capabilities:
    """What the backend supports; a False flag skips that check (media: checks the refusal)."""

    system_message: bool = True
    tools: bool = True
    parallel_tool_calls: bool = True
    reasoning: bool = False
    stop: bool = True
    max_tokens: bool = True
    output_schema: bool = False
    images: bool = False  # base64 images
    image_urls: bool = False  # public image URLs
    audio: bool = False


@attrs.frozen
class ScriptedTurn:
    """What a scripted backend should stream for the next request."""

    text: tuple[str, ...] = ()
    reasoning: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    #: Seconds between streamed chunks (the cancellation test streams slowly).
    chunk_delay: float = 0.0

    @property
    def full_text(self) -> str:
        return "".join(self.text)


Script = Callable[[ScriptedTurn, dict[str, Any]], "Awaitable[None] | None"]


@attrs.define
class LanguageModelUnderTest:
    """A defined language-model component and what it can do."""

    #: An `ferrule.AsyncRuntime` (or anything with its ``call_iter_method``).
    runtime: Any
    component: str
    capabilities: Capabilities = attrs.Factory(Capabilities)
    script: Script | None = None

    @property
    def scripted(self) -> bool:
        return self.script is not None

    async def expect(self, turn: ScriptedTurn, inputs: dict[str, Any]) -> None:
        if self.script is not None:
            result = self.script(turn, inputs)
            if inspect.isawaitable(result):
                await result

    def stream(self, inputs: dict[str, Any]) -> Any:
        return self.runtime.call_iter_method(self.component, "infer", inputs)

    async def run(self, inputs: dict[str, Any], turn: ScriptedTurn) -> list[dict[str, Any]]:
        """Script ``turn``, run ``infer`` to the end and check the stream's shape."""
        await self.expect(turn, inputs)
        items = [item async for item in self.stream(inputs)]
        check_stream(items)
        return items


# -- checks ---------------------------------------------------------------------------


def check_item(item: Any, index: int) -> None:
    where = f"item {index}"
    assert isinstance(item, dict), f"{where}: expected a dict, got {type(item).__name__}"
    message = item.get("message")
    assert isinstance(message, dict), f"{where}: 'message' must be an object"
    assert message.get("role") == "assistant", f"{where}: message.role must be 'assistant'"
    content = message.get("content")
    assert isinstance(content, list) and content, (
        f"{where}: message.content must be a non-empty list"
    )
    first = content[0]
    assert (
        isinstance(first, dict)
        and first.get("type") == "text"
        and isinstance(first.get("text"), str)
    ), f"{where}: message.content[0] must be a text part, got {first!r}"
    if "reasoning" in message:
        reasoning = message["reasoning"]
        assert isinstance(reasoning, list) and reasoning, (
            f"{where}: 'reasoning' only when non-empty"
        )
        for part in reasoning:
            assert isinstance(part.get("text"), str), f"{where}: reasoning parts carry text"
    if "tool_calls" in message:
        calls = message["tool_calls"]
        assert isinstance(calls, list) and calls, f"{where}: 'tool_calls' only when non-empty"
        for call in calls:
            assert isinstance(call.get("index"), int), f"{where}: a tool-call delta needs its index"
            assert call.get("type") == "function", f"{where}: tool-call type must be 'function'"
            assert isinstance(call.get("function", {}).get("arguments"), str), (
                f"{where}: tool-call arguments are a JSON fragment (a string)"
            )
    reason = item.get("finish_reason")
    assert reason is None or reason in FINISH_REASONS, f"{where}: unknown finish_reason {reason!r}"


def check_stream(items: list[Any]) -> None:
    """The stream rules of `ferrule_kit.models.lm`: item shapes; one final item, last, with usage;
    the first delta of each tool call carries its id and name."""
    assert items, "the stream yielded nothing"
    for index, item in enumerate(items):
        check_item(item, index)
    finals = [i for i, item in enumerate(items) if item.get("finish_reason") is not None]
    assert finals == [len(items) - 1], (
        f"exactly the last item has a finish_reason; got items {finals}"
    )
    usage = items[-1].get("usage")
    assert isinstance(usage, dict), "the final item carries usage"
    for key in ("input_tokens", "output_tokens"):
        assert isinstance(usage.get(key), int) and usage[key] >= 0, f"usage.{key} must be a count"
    assert all("usage" not in item for item in items[:-1]), "only the final item carries usage"
    seen: set[int] = set()
    for item in items:
        for call in item["message"].get("tool_calls", ()):
            if call["index"] not in seen:
                seen.add(call["index"])
                assert call.get("id"), f"tool call {call['index']}: its first delta carries the id"
                assert call["function"].get("name"), (
                    f"tool call {call['index']}: its first delta carries the name"
                )


def _texts(items: list[dict[str, Any]]) -> list[str]:
    return [t for item in items if (t := item["message"]["content"][0]["text"])]


def fold(items: list[dict[str, Any]]) -> MessageAccumulator:
    """A streamed reply's items folded into one `MessageAccumulator`."""
    acc = MessageAccumulator()
    for item in items:
        acc.add(item)
    return acc


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def tiny_png() -> bytes:
    """A valid 2x2 RGB PNG."""
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + _png_chunk(b"IDAT", zlib.compress(raw))
        + _png_chunk(b"IEND", b"")
    )


def tiny_wav() -> bytes:
    """A valid 10 ms mono 16-bit WAV of silence."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 80)
    return out.getvalue()


def _user(text: str, *media: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}, *media]}


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current local time in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


class LanguageModelConformance:
    """The conformance suite; see the module docstring. Override the ``lm`` fixture."""

    @pytest.fixture
    def lm(self) -> LanguageModelUnderTest:
        pytest.fail("a LanguageModelConformance subclass must override the 'lm' fixture")

    # -- text --------------------------------------------------------------------------

    async def test_lm_streams_text(self, lm: LanguageModelUnderTest) -> None:
        turn = ScriptedTurn(text=("Hello", " there", ", friend", "."))
        items = await lm.run({"messages": [_user("Say hello in a few words.")]}, turn)
        texts = _texts(items)
        assert "".join(texts).strip(), "a text reply arrived"
        assert items[-1]["finish_reason"] in ("stop", "length")
        assert all("tool_calls" not in i["message"] for i in items), "no tool calls without tools"
        if lm.scripted:
            assert texts == list(turn.text), "text arrives as the deltas the server streamed"
            assert items[-1]["finish_reason"] == "stop"
            assert items[-1]["usage"]["output_tokens"] > 0
            assert items[-1]["usage"]["input_tokens"] > 0

    async def test_lm_system_message(self, lm: LanguageModelUnderTest) -> None:
        if not lm.capabilities.system_message:
            pytest.skip("backend declares no system-message support")
        turn = ScriptedTurn(text=("Arr", ", matey."))
        messages = [
            {"role": "system", "content": [{"type": "text", "text": "You are a pirate."}]},
            _user("Greet me."),
        ]
        items = await lm.run({"messages": messages}, turn)
        assert "".join(_texts(items)).strip()
        if lm.scripted:
            assert fold(items).message().text == turn.full_text

    async def test_lm_multi_turn(self, lm: LanguageModelUnderTest) -> None:
        turn = ScriptedTurn(text=("Your name is ", "Ada."))
        messages = [
            _user("My name is Ada."),
            {"role": "assistant", "content": [{"type": "text", "text": "Nice to meet you, Ada."}]},
            _user("What is my name?"),
        ]
        items = await lm.run({"messages": messages}, turn)
        if lm.scripted:
            assert fold(items).message().text == turn.full_text
        else:
            assert "".join(_texts(items)).strip()

    async def test_lm_usage_on_final_item_only(self, lm: LanguageModelUnderTest) -> None:
        turn = ScriptedTurn(text=tuple(f"w{i} " for i in range(12)))
        items = await lm.run({"messages": [_user("Count a little.")]}, turn)
        usage = items[-1]["usage"]
        assert usage["output_tokens"] >= (1 if _texts(items) else 0)

    # -- tools -------------------------------------------------------------------------

    async def test_lm_tool_call(self, lm: LanguageModelUnderTest) -> None:
        if not lm.capabilities.tools:
            pytest.skip("backend declares no tool support")
        call = ToolCall(id="call_weather_1", name="get_weather", arguments={"city": "Oslo"})
        turn = ScriptedTurn(tool_calls=(call,), finish_reason="tool_calls")
        inputs = {
            "messages": [_user("What is the weather in Oslo? Use the tool.")],
            "tools": [WEATHER_TOOL],
        }
        items = await lm.run(inputs, turn)
        acc = fold(items)
        calls = acc.tool_calls()  # raises InvalidToolCallError on bad JSON
        if lm.scripted:
            assert items[-1]["finish_reason"] == "tool_calls"
            assert [(c.id, c.name, c.arguments) for c in calls] == [
                (call.id, call.name, call.arguments)
            ]
            fragments = [c for i in items for c in i["message"].get("tool_calls", ())]
            assert len(fragments) >= 2, "arguments arrive in fragments"
        elif items[-1]["finish_reason"] == "tool_calls":
            assert calls and all(c.id and c.name for c in calls)

    async def test_lm_parallel_tool_calls(self, lm: LanguageModelUnderTest) -> None:
        if not (lm.capabilities.tools and lm.capabilities.parallel_tool_calls):
            pytest.skip("backend declares no parallel tool calls")
        expected = (
            ToolCall(id="call_a", name="get_weather", arguments={"city": "Oslo"}),
            ToolCall(id="call_b", name="get_time", arguments={"city": "Lima"}),
        )
        turn = ScriptedTurn(tool_calls=expected, finish_reason="tool_calls")
        inputs = {
            "messages": [_user("Weather in Oslo and the time in Lima? Use both tools at once.")],
            "tools": [WEATHER_TOOL, TIME_TOOL],
        }
        items = await lm.run(inputs, turn)
        calls = fold(items).tool_calls()
        if lm.scripted:
            assert [(c.id, c.name, c.arguments) for c in calls] == [
                (c.id, c.name, c.arguments) for c in expected
            ]
            assert len({c.id for c in calls}) == 2, "each call keeps its own id"

    async def test_lm_tool_result_round_trip(self, lm: LanguageModelUnderTest) -> None:
        if not lm.capabilities.tools:
            pytest.skip("backend declares no tool support")
        turn = ScriptedTurn(text=("It is 3°C ", "in Oslo."))
        messages = [
            _user("What is the weather in Oslo?"),
            {
                "role": "assistant",
                "content": [],
                "tool_calls": [
                    {
                        "id": "call_w",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_w",
                "content": [{"type": "text", "text": '{"temp": 3}'}],
            },
        ]
        items = await lm.run({"messages": messages, "tools": [WEATHER_TOOL]}, turn)
        assert "".join(_texts(items)).strip() or items[-1]["finish_reason"] == "tool_calls"
        if lm.scripted:
            assert fold(items).message().text == turn.full_text

    # -- reasoning ---------------------------------------------------------------------

    async def test_lm_reasoning(self, lm: LanguageModelUnderTest) -> None:
        if not lm.capabilities.reasoning:
            pytest.skip("backend declares no reasoning support")
        turn = ScriptedTurn(
            reasoning=("x+y=3 ", "so y=3-x. ", "4x+9-3x=12, x=3."), text=("x=3, y=0",)
        )
        inputs = {"messages": [_user("Solve x+y=3, 4x+3y=12.")], "reasoning": True}
        items = await lm.run(inputs, turn)
        reasoning = [
            p["text"] for i in items for p in i["message"].get("reasoning", ()) if p["text"]
        ]
        if lm.scripted:
            assert reasoning == list(turn.reasoning), "reasoning arrives as reasoning deltas"
            assert fold(items).message().text == turn.full_text, "reasoning stays out of the text"
        else:
            assert reasoning or _texts(items)

    # -- options -----------------------------------------------------------------------

    async def test_lm_max_tokens(self, lm: LanguageModelUnderTest) -> None:
        if not lm.capabilities.max_tokens:
            pytest.skip("backend declares no max_tokens")
        turn = ScriptedTurn(text=("One", " two", " three"), finish_reason="length")
        inputs = {"messages": [_user("Count to one hundred in words.")], "max_tokens": 3}
        items = await lm.run(inputs, turn)
        assert items[-1]["finish_reason"] == "length"
        if not lm.scripted:
            assert items[-1]["usage"]["output_tokens"] <= 3

    async def test_lm_stop(self, lm: LanguageModelUnderTest) -> None:
        if not lm.capabilities.stop:
            pytest.skip("backend declares no stop sequences")
        turn = ScriptedTurn(text=("1, 2, 3",))
        inputs = {"messages": [_user("Count from 1 to 10, separated by commas.")], "stop": ["4"]}
        items = await lm.run(inputs, turn)
        assert "4" not in fold(items).message().text

    async def test_lm_output_schema(self, lm: LanguageModelUnderTest) -> None:
        if not lm.capabilities.output_schema:
            pytest.skip("backend declares no structured output")
        schema = {
            "type": "object",
            "properties": {"answer": {"type": "integer"}},
            "required": ["answer"],
            "additionalProperties": False,
        }
        turn = ScriptedTurn(text=('{"answer"', ": 4}"))
        inputs = {"messages": [_user("What is 2+2? Reply in JSON.")], "output_schema": schema}
        items = await lm.run(inputs, turn)
        reply = json.loads(fold(items).message().text)
        assert isinstance(reply, dict) and isinstance(reply.get("answer"), int)

    # -- media -------------------------------------------------------------------------

    async def _media(
        self, lm: LanguageModelUnderTest, supported: bool, part: dict[str, Any], what: str
    ) -> None:
        if part["type"] not in registry.wire_types():
            pytest.skip(f"no content plugin reading {part['type']!r} parts is installed")
        turn = ScriptedTurn(text=("A small ", what, "."))
        inputs = {"messages": [_user(f"Describe this {what}.", part)]}
        if supported:
            items = await lm.run(inputs, turn)
            assert "".join(_texts(items)).strip()
            return
        with pytest.raises(UnsupportedContentError) as info:
            async for _ in lm.stream(inputs):
                pass
        message = info.value.message.lower()
        assert what.split()[0] in message, (
            f"the refusal names the content type: {info.value.message}"
        )

    async def test_lm_image_base64(self, lm: LanguageModelUnderTest) -> None:
        url = "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
        part = {"type": "image_url", "image_url": {"url": url}}
        await self._media(lm, lm.capabilities.images, part, "image")

    async def test_lm_image_url(self, lm: LanguageModelUnderTest) -> None:
        part = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
        await self._media(lm, lm.capabilities.image_urls, part, "image")

    async def test_lm_audio(self, lm: LanguageModelUnderTest) -> None:
        part = {
            "type": "input_audio",
            "input_audio": {"data": base64.b64encode(tiny_wav()).decode(), "format": "wav"},
        }
        await self._media(lm, lm.capabilities.audio, part, "audio")

    # -- errors and cancellation -------------------------------------------------------

    @pytest.mark.parametrize(
        ("inputs", "field"),
        [
            ({"messages": []}, "$.messages"),
            ({"messages": [_user("hi")], "temperature": 7}, "$.temperature"),
            ({"messages": [_user("hi")], "max_tokens": 0}, "$.max_tokens"),
            ({"messages": [{"role": "robot", "content": "hi"}]}, "$.messages[0].role"),
            (
                {"messages": [{"role": "user", "content": [{"type": "text"}]}]},
                "$.messages[0].content[0].text",
            ),
            ({"msgs": []}, "$"),
        ],
    )
    async def test_lm_bad_input_names_the_field(
        self, lm: LanguageModelUnderTest, inputs: dict[str, Any], field: str
    ) -> None:
        with pytest.raises(InvalidInputError) as info:
            async for _ in lm.stream(inputs):
                pass
        paths = [e["path"] for e in info.value.errors]
        assert any(p == field or p.startswith(field) for p in paths), f"{field} not among {paths}"

    async def test_lm_close_early_ends_promptly(self, lm: LanguageModelUnderTest) -> None:
        turn = ScriptedTurn(text=tuple(f"word{i} " for i in range(400)), chunk_delay=0.02)
        inputs = {"messages": [_user("Write a very long story.")]}
        await lm.expect(turn, inputs)
        stream = lm.stream(inputs)
        first = await asyncio.wait_for(stream.__anext__(), 60)
        check_item(first, 0)
        start = time.monotonic()
        await asyncio.wait_for(stream.aclose(), 5)
        assert time.monotonic() - start < 5
        # The component still serves requests after an abandoned stream.
        again = ScriptedTurn(text=("Still", " here."))
        items = await lm.run({"messages": [_user("Are you there?")]}, again)
        if lm.scripted:
            assert fold(items).message().text == again.full_text
