"""`ferrule_kit.models.tool_choice`: a backend that honours only ``output_schema`` honours
``tool_choice`` once its ``infer`` is decorated."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from ferrule_kernel import InvalidInputError
from ferrule_kit.models.lm import (
    InferInput,
    MessageAccumulator,
    finish,
    parse_infer_input,
    reasoning_delta,
    text_delta,
)
from ferrule_kit.models.tool_choice import forced_call_schema, honour_tool_choice

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
NEWS = {"type": "function", "function": {"name": "get_news"}}


class SchemaBackend:
    """Replies ``reply`` in pieces of ``size`` characters (as a grammar-constrained model
    writes JSON), after a line of reasoning; records what it was asked."""

    def __init__(self, reply: str, size: int = 3, reason: str = "stop") -> None:
        self.reply, self.size, self.reason = reply, size, reason
        self.seen: list[InferInput] = []
        self.closed = False

    @honour_tool_choice
    async def infer(self, inputs: InferInput):
        self.seen.append(inputs)
        try:
            yield reasoning_delta("thinking")
            for start in range(0, len(self.reply), self.size):
                yield text_delta(self.reply[start : start + self.size])
            yield finish(self.reason)  # type: ignore[arg-type]
        finally:
            self.closed = True


def run(backend: SchemaBackend, **inputs: Any) -> list[dict[str, Any]]:
    request = parse_infer_input({"messages": [{"role": "user", "content": "Oslo"}], **inputs})

    async def collect() -> list[dict[str, Any]]:
        return [item async for item in backend.infer(request)]

    return asyncio.run(collect())


def folded(items: list[dict[str, Any]]) -> MessageAccumulator:
    acc = MessageAccumulator()
    for item in items:
        acc.add(item)
    return acc


CALL = '{ "name" : "get_weather", "arguments": {"city": "O}slo"} }\n'


def test_a_required_call_is_constrained_and_streamed_back_as_a_tool_call():
    backend = SchemaBackend(CALL)
    items = run(backend, tools=[WEATHER], tool_choice="required")
    assert backend.seen[0].output_schema == forced_call_schema(
        parse_infer_input(
            {
                "messages": [{"role": "user", "content": "x"}],
                "tools": [WEATHER],
                "tool_choice": "required",
            }
        )
    )
    assert backend.seen[0].tools[0].function.name == "get_weather"  # still in the prompt
    acc = folded(items)
    [call] = acc.tool_calls()
    assert (call.name, call.arguments) == ("get_weather", {"city": "O}slo"})
    assert acc.finish_reason == "tool_calls" and acc.text == []
    assert [p.text for p in acc.reasoning] == ["thinking"]
    fragments = [i for i in items if i["message"].get("tool_calls")]
    assert len(fragments) > 2  # the arguments arrive as they are generated


def test_the_schema_of_a_named_or_any_tool():
    def schema(choice: Any) -> Any:
        request = {"messages": [{"role": "user", "content": "x"}], "tools": [WEATHER, NEWS]}
        return forced_call_schema(parse_infer_input({**request, "tool_choice": choice}))

    named = schema({"type": "function", "function": {"name": "get_news"}})
    assert named["properties"]["name"] == {"const": "get_news"}
    assert [s["properties"]["name"]["const"] for s in schema("required")["anyOf"]] == [
        "get_weather",
        "get_news",
    ]
    assert schema("auto") is None and schema("none") is None


def test_none_hides_the_tools_and_auto_changes_nothing():
    backend = SchemaBackend("plain words")
    acc = folded(run(backend, tools=[WEATHER], tool_choice="none"))
    assert backend.seen[-1].tools == [] and "".join(acc.text) == "plain words"
    folded(run(backend, tools=[WEATHER]))
    assert backend.seen[-1].output_schema is None and len(backend.seen[-1].tools) == 1


def test_a_reply_cut_short_keeps_its_reason():
    backend = SchemaBackend('{"name": "get_weather", "arguments": {"ci', reason="length")
    items = run(backend, tools=[WEATHER], tool_choice="required")
    assert items[-1]["finish_reason"] == "length"
    assert (
        "".join(
            c["function"]["arguments"] for i in items for c in i["message"].get("tool_calls", ())
        )
        == '{"ci'
    )


def test_closing_the_stream_closes_the_backends():
    backend = SchemaBackend(CALL, size=1)
    request = parse_infer_input(
        {
            "messages": [{"role": "user", "content": "x"}],
            "tools": [WEATHER],
            "tool_choice": "required",
        }
    )

    async def first_then_close() -> None:
        stream = backend.infer(request)
        await anext(stream)
        await stream.aclose()

    asyncio.run(first_then_close())
    assert backend.closed


def test_tool_choice_is_checked_against_the_tools():
    messages = [{"role": "user", "content": "x"}]
    with pytest.raises(InvalidInputError, match="not among the request's tools"):
        parse_infer_input(
            {
                "messages": messages,
                "tools": [WEATHER],
                "tool_choice": {"type": "function", "function": {"name": "nope"}},
            }
        )
    with pytest.raises(InvalidInputError, match="needs at least one tool"):
        parse_infer_input({"messages": messages, "tool_choice": "required"})
    with pytest.raises(InvalidInputError, match="tool_choice"):
        parse_infer_input({"messages": messages, "tools": [WEATHER], "tool_choice": "always"})
    assert (
        json.dumps(  # a named choice goes back on the wire in the OpenAI shape
            parse_infer_input(
                {
                    "messages": messages,
                    "tools": [WEATHER],
                    "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
                }
            ).forced_tool
        )
        == '"get_weather"'
    )
