"""Agno's cache of what a tool factory makes: ``cache_callables`` (True by default) keeps a
factory's tools per key (``callable_tools_cache_key``, else the run's user, else its
session), and ``clear_callable_cache`` / ``aclear_callable_cache`` forget them (``close``:
closing the toolsets among them). Runs on `TestModel`, which answers with the names of the
tools each request offers."""

from __future__ import annotations

import asyncio

import pytest
from ferrule.agent import Agent
from ferrule.tools import Tool
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


def offered(infer_input) -> str:
    return ",".join(sorted(t.function.name for t in infer_input.tools or []))


class Factory:
    """A tool factory counting its calls; its tools are named for the user it saw."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, run_context) -> list:
        self.calls += 1
        user = run_context.user_id or "nobody"

        def lookup() -> str:
            """Look it up."""
            return user

        lookup.__name__ = f"lookup_{user}_{self.calls}"
        return [lookup]


def test_tools_are_made_once_per_user_and_kept():
    factory = Factory()
    with Agent(model=TestModel(function=offered), tools=factory) as agent:
        assert agent.cache_callables is True
        assert agent.run("a", user_id="ann").content == "lookup_ann_1"
        assert agent.run("b", user_id="ann").content == "lookup_ann_1"  # kept
        assert agent.run("c", user_id="bob").content == "lookup_bob_2"
        assert agent.run("d", user_id="ann").content == "lookup_ann_1"
        assert factory.calls == 2
        agent.clear_callable_cache()
        assert agent.run("e", user_id="ann").content == "lookup_ann_3"
        agent.clear_callable_cache(kind="knowledge")  # ferrule keeps no knowledge: tools stay
        assert agent.run("f", user_id="ann").content == "lookup_ann_3"


def test_without_a_user_the_session_is_the_key():
    factory = Factory()
    with Agent(model=TestModel(function=offered), tools=factory) as agent:
        agent.run("a", session_id="s1")
        agent.run("b", session_id="s1")
        agent.run("c", session_id="s2")
    assert factory.calls == 2


def test_a_deep_copy_keeps_the_factory_and_makes_its_own_tools():
    factory = Factory()
    with Agent(model=TestModel(function=offered), tools=factory) as agent:
        assert agent.run("a", user_id="ann").content == "lookup_ann_1"
        with agent.deep_copy() as copy:
            assert copy.run("b", user_id="ann").content == "lookup_ann_2"  # its own cache
    assert factory.calls == 2


def test_cache_callables_false_calls_the_factory_each_run():
    factory = Factory()
    agent = Agent(model=TestModel(function=offered), tools=factory, cache_callables=False)
    assert agent.run("a", user_id="ann").content == "lookup_ann_1"
    assert agent.run("b", user_id="ann").content == "lookup_ann_2"
    agent.delete()
    assert agent.to_dict()["cache_callables"] is False


def test_a_key_function_decides_the_key_and_may_be_async():
    factory = Factory()
    seen = []

    async def by_tenant(agent, run_context):
        seen.append(agent.name)
        return (run_context.metadata or {}).get("tenant")

    agent = Agent(
        name="desk",
        model=TestModel(function=offered),
        tools=factory,
        callable_tools_cache_key=by_tenant,
    )
    agent.run("a", user_id="ann", metadata={"tenant": "t1"})
    agent.run("b", user_id="bob", metadata={"tenant": "t1"})  # same tenant: kept
    agent.run("c", user_id="bob", metadata={"tenant": "t2"})
    agent.run("d", user_id="bob")  # None: not cached
    agent.run("e", user_id="bob")
    agent.delete()
    assert factory.calls == 4
    assert seen == ["desk"] * 5


def test_clearing_with_close_closes_the_kept_toolsets():
    class Server:
        def __init__(self) -> None:
            self.closed = 0

        async def list_tools(self) -> list[Tool]:
            return [Tool.from_function(ping)]

        async def aclose(self) -> None:
            self.closed += 1

    def ping() -> str:
        """Ping."""
        return "pong"

    server = Server()

    async def main() -> None:
        agent = Agent(model=TestModel(function=offered), tools=lambda: [server])
        assert (await agent.arun("a", user_id="ann")).content == "ping"
        await agent.aclear_callable_cache(close=False)
        assert server.closed == 0
        await agent.arun("b", user_id="ann")
        await agent.aclear_callable_cache(kind="tools", close=True)
        assert server.closed == 1
        await agent.adelete()

    asyncio.run(main())


def test_bad_settings_are_refused_naming_them():
    with pytest.raises(InvalidInputError) as raised:
        Agent(model=TestModel(), cache_callables="yes")
    assert raised.value.errors[0]["path"] == "cache_callables"
    with pytest.raises(InvalidInputError) as raised:
        Agent(model=TestModel(), callable_tools_cache_key="user")
    assert raised.value.errors[0]["path"] == "callable_tools_cache_key"
    agent = Agent(
        model=TestModel(function=offered), tools=lambda: [], callable_tools_cache_key=lambda: 7
    )
    with pytest.raises(InvalidInputError) as raised:
        agent.run("a")
    agent.delete()
    assert raised.value.errors[0]["path"] == "callable_tools_cache_key"
    with pytest.raises(InvalidInputError) as raised:
        Agent(model=TestModel()).clear_callable_cache(kind="memories")
    assert raised.value.errors[0]["path"] == "kind"
