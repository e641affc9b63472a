"""Agno's ``agno.tools`` API beyond the cookbook: `Function`'s hooks, tool hooks, result
cache, strict schemas and instructions; `Toolkit`'s async tools, cache and timeout; the
decorator's checks. Each runs through an agent against the loopback `wire`, as a program
would."""

from __future__ import annotations

import asyncio
import json

import pytest
from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.tools import Function, FunctionCall, Toolkit, tool
from ferrule.tools.function import FunctionExecutionResult


def test_pre_and_post_hooks_see_the_call_and_its_result(wire):
    seen = []

    def before(fc: FunctionCall) -> None:
        seen.append(("pre", fc.function.name, dict(fc.arguments), fc.result))

    def after(fc: FunctionCall) -> None:
        seen.append(("post", fc.function.name, dict(fc.arguments), fc.result))

    @tool(pre_hook=before, post_hook=after)
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    wire.calls("add", a=2, b=3)
    wire.says("5.")
    run = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[add]).run("2+3?")
    assert run.content == "5."
    assert seen == [("pre", "add", {"a": 2, "b": 3}, None), ("post", "add", {"a": 2, "b": 3}, 5)]
    assert add(1, 1) == 2  # still the function


def test_tool_hooks_wrap_the_call_in_order_and_may_change_arguments_and_result(wire):
    order = []

    def outer(function_name: str, function_call, arguments: dict) -> object:
        order.append(f"outer:{function_name}")
        result = function_call(**{**arguments, "text": arguments["text"].upper()})
        return f"<{result}>"

    async def inner(function_call, arguments: dict) -> object:
        order.append("inner")
        return await function_call(**arguments) + "!"

    @tool(tool_hooks=[outer, inner])
    def echo(text: str) -> str:
        """Say the text back."""
        order.append("echo")
        return text

    wire.calls("echo", text="hi")
    wire.says("Done.")
    Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[echo]).run("Echo hi.")
    assert order == ["outer:echo", "inner", "echo"]
    tool_result = next(m for m in wire.bodies[1]["messages"] if m["role"] == "tool")
    assert tool_result["content"] == "<HI!>"


def test_cache_results_answers_a_repeated_call_from_the_cache_until_the_ttl(wire, tmp_path):
    calls = []

    @tool(cache_results=True, cache_dir=str(tmp_path), cache_ttl=60)
    def lookup(city: str) -> dict:
        """Look a city up."""
        calls.append(city)
        return {"city": city, "n": len(calls)}

    agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[lookup])
    for _ in range(2):
        wire.calls("lookup", city="Oslo")
        wire.says("Ok.")
        agent.run("Look up Oslo.")
    assert calls == ["Oslo"]  # the second run was answered from the cache
    results = [
        json.loads(m["content"]) for b in wire.bodies for m in b["messages"] if m["role"] == "tool"
    ]
    assert results[-1] == {"city": "Oslo", "n": 1}
    assert list((tmp_path / "v1" / "lookup").glob("*.json"))
    expired = Function(
        name="lookup",
        entrypoint=lookup.function,
        cache_results=True,
        cache_dir=str(tmp_path),
        cache_ttl=0,
    )
    assert asyncio.run(_invoke(expired, city="Oslo"))["n"] == 2  # ttl 0: called again


async def _invoke(function, **arguments):
    from ferrule.shared_runtime import default_runtime
    from ferrule.tools import ToolContext
    from ferrule_kit.content.messages import ToolCall

    context = ToolContext(default_runtime(), ToolCall("c1", function.name, arguments))
    return await function.invoke(arguments, context)


def test_strict_schemas_require_every_property_and_allow_no_other():
    @tool(strict=True)
    def book(city: str, nights: int = 1) -> str:
        """Book a room."""
        return city

    assert book.parameters["additionalProperties"] is False
    assert book.parameters["required"] == ["city", "nights"]
    loose = Function.from_callable(book.function)
    assert "additionalProperties" not in loose.parameters
    loose.process_schema_for_strict()
    assert loose.parameters["required"] == ["city", "nights"]


def test_a_functions_instructions_join_the_system_message(wire):
    @tool(instructions="Always give the temperature in Celsius.")
    def weather(city: str) -> str:
        """The weather."""
        return "20C"

    wire.says("Sunny.")
    Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[weather]).run("Weather?")
    system = wire.bodies[0]["messages"][0]
    assert (
        system["role"] == "system"
        and "Always give the temperature in Celsius." in system["content"]
    )


def test_the_decorator_refuses_unknown_options_and_two_pause_kinds():
    with pytest.raises(ValueError, match="invalid tool configuration arguments"):
        tool(confirm=True)
    with pytest.raises(ValueError, match="only one of"):
        tool(requires_confirmation=True, external_execution=True)


def test_a_function_call_executes_outside_any_agent():
    @tool
    def double(n: int) -> int:
        """Double it."""
        return 2 * n

    call = FunctionCall(function=double, arguments={"n": 21})
    assert call.execute() == FunctionExecutionResult(status="success", result=42)
    assert call.get_call_str() == "double(n=21)"
    bad = FunctionCall(function=double, arguments={"n": "many"})
    assert bad.execute().status == "failure" and bad.error


def test_toolkit_prefers_async_variants_caches_and_bounds_each_call(wire, tmp_path):
    class Maps(Toolkit):
        def __init__(self) -> None:
            super().__init__(
                name="maps",
                tools=[self.distance],
                async_tools=[(self.adistance, "distance")],
                cache_results=True,
                cache_dir=str(tmp_path),
                timeout=5,
            )
            self.async_calls = 0

        def distance(self, a: str, b: str) -> int:
            """Distance in km."""
            raise AssertionError("the async variant runs in an agent")

        async def adistance(self, a: str, b: str) -> int:
            """Distance in km."""
            self.async_calls += 1
            return 42

    maps = Maps()
    assert set(maps.get_functions()) == {"distance"}
    assert maps.get_async_functions()["distance"].entrypoint == maps.adistance
    assert maps.get_async_functions()["distance"].timeout == 5
    agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[maps])
    for _ in range(2):
        wire.calls("distance", a="Oslo", b="Bergen")
        wire.says("42 km.")
        agent.run("How far?")
    assert maps.async_calls == 1


def test_a_toolkit_that_needs_a_connection_is_connected_and_closed():
    events = []

    class Db(Toolkit):
        _requires_connect = True

        def __init__(self) -> None:
            super().__init__(name="db", tools=[self.query])

        def connect(self) -> None:
            events.append("connect")

        def close(self) -> None:
            events.append("close")

        def query(self, sql: str) -> str:
            """Run a query."""
            return sql

    db = Db()
    assert db.requires_connect
    asyncio.run(db.list_tools())
    asyncio.run(db.list_tools())
    asyncio.run(db.aclose())
    assert events == ["connect", "close"]
