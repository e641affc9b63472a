"""Agno's ``Agent.get_tools(run_response, run_context, session, user_id=None)`` /
``aget_tools(..., check_mcp_tools=True)``: the tools a run is given, the agent's own objects
first (a `Toolkit` stays one), then what the run adds (the tool factory's, the client's,
the history tools); without arguments, Ailoy's ``get_tools()``: the tools as given."""

from __future__ import annotations

import asyncio

from ferrule.agent import Agent
from ferrule.run import RunContext
from ferrule.tools import Tool, Toolkit
from ferrule_testmodel import TestModel


class Shop(Toolkit):
    def __init__(self) -> None:
        super().__init__(name="shop", tools=[self.price])

    def price(self, item: str) -> float:
        """The price of an item."""
        return 1.0


def weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


def names(tools) -> list[str]:
    return [t.name for t in tools]


def test_without_arguments_the_tools_as_given():
    shop = Shop()
    agent = Agent(model=TestModel(), tools=[shop, weather])
    given = agent.get_tools()
    assert given[0] is shop and isinstance(given[1], Tool) and given[1].name == "weather"
    agent.delete()


def test_with_agnos_arguments_the_runs_tools():
    shop = Shop()

    def extra() -> str:
        """Extra."""
        return "x"

    def client() -> str:
        """The client's."""
        return "c"

    agent = Agent(model=TestModel(), tools=[shop, weather], read_chat_history=True)
    output = agent.run("hi")
    context = RunContext(run_id=output.run_id, session_id=output.session_id, client_tools=[client])
    tools = agent.get_tools(output, context, None)
    assert tools[0] is shop  # the toolkit as it is, not its functions
    assert names(tools[1:]) == ["weather", "get_chat_history", "client"]
    assert names(context.tools) == ["price", "weather", "get_chat_history", "client"]
    agent.delete()


def test_the_factorys_tools_for_a_user():
    def make(run_context) -> list:
        def mine() -> str:
            """Mine."""
            return run_context.user_id

        mine.__name__ = f"for_{run_context.user_id}"
        return [mine]

    agent = Agent(model=TestModel(), tools=make)
    assert agent.get_tools() == []  # no tools of its own
    tools = agent.get_tools(None, None, None, user_id="ann")
    assert names(tools) == ["for_ann"]
    agent.delete()


def test_check_mcp_tools_leaves_out_a_toolset_that_does_not_answer():
    class Down:
        async def list_tools(self) -> list[Tool]:
            raise ConnectionError("no server")

        async def aclose(self) -> None:
            pass

    down = Down()

    async def main() -> None:
        agent = Agent(model=TestModel(), tools=[weather, down])
        context = RunContext(run_id="r1", session_id="s1")
        checked = await agent.aget_tools(None, context, None)
        assert names(checked) == ["weather"]
        unchecked = await agent.aget_tools(None, context, None, check_mcp_tools=False)
        assert unchecked[1] is down
        await agent.adelete()

    asyncio.run(main())
