"""Ailoy 0.2.5's tool guides, as programs: tutorial/using-tools (a Python function with a
`ToolDesc`, one described by its docstring, ``add_tool`` / ``add_tools``, the builtin
``terminal``) and tutorial/mcp-integration (``MCPClient.from_stdio``, ``get_tool``,
``Agent(lm, tools)``). The guides' Qwen3 is a scripted model here, because the outcome is
the tool call and what it did; the guides' internet (api.frankfurter.app, GitHub through
``npx``) is a loopback server and a local MCP server of the same tools."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib import error, parse, request

import ferrule as ai
import pytest
from ferrule_kit.testing.loopback import LoopbackServer, Reply

from .conftest import Script

REPOSITORY_SERVER = Path(__file__).with_name("repository_mcp_server.py")
RATES = {
    "amount": 1.0,
    "base": "KRW",
    "date": "2026-11-27",
    "rates": {"CNY": 0.0052, "USD": 0.00072},
}


def frankfurter_behavior(url: str):
    """The guide's ``tool_behavior``, reading rates from ``url`` instead of
    api.frankfurter.app."""

    def tool_behavior(base, symbols):
        if not base:
            raise ValueError("Missing 'base'")
        if not symbols:
            raise ValueError("Missing 'symbols'")
        query = parse.urlencode({"from": base, "to": symbols})
        try:
            with request.urlopen(f"{url}/latest?{query}", timeout=10) as resp:
                if resp.status != 200:
                    raise RuntimeError(f"Frankfurter API returned HTTP {resp.status}")
                payload = json.loads(resp.read().decode("utf-8"))
        except error.URLError as e:
            raise RuntimeError(f"Failed to reach Frankfurter API: {e}") from e
        return payload

    return tool_behavior


TOOL_DESC_PARAMETERS = {
    "type": "object",
    "properties": {
        "base": {
            "type": "string",
            "description": "The ISO 4217 currency code to be the divider of the currency rate to be got.",
        },
        "symbols": {
            "type": "string",
            "description": "The target ISO 4217 currency codes separated by comma.",
        },
    },
}


def outputs_as_the_guide_prints(resp: ai.MessageOutput) -> str:
    """The guide's loop body: a tool call, the tool's response, or the answer."""
    if resp.message.role == "assistant":
        if len(resp.message.tool_calls) > 0:
            return f"Tool call: {resp.message.tool_calls[0].function}"
        return resp.message.contents[0].text
    assert resp.message.role == "tool"
    return f"Tool response: {resp.message.contents[0].value}"


async def test_python_function_tool_with_tool_desc(runtime: ai.Runtime) -> None:
    """``ai.ToolDesc(name=, description=, parameters=)``, ``Tool.new_py_function(
    tool_behavior, tool_desc)``, ``Agent(lm, tools)``: the model is offered the tool as
    described, calls it, the function runs (a real HTTP request), its result goes back to
    the model, and the outputs read as the guide reads them."""
    tool_desc = ai.ToolDesc(
        name="frankfurter",
        description="Get the latest currency exchange rates of target currencies based on the 'base' currency",
        parameters=TOOL_DESC_PARAMETERS,
    )
    arguments = {"base": "KRW", "symbols": "USD,CNY"}
    script = Script(
        [
            {"tool_calls": [{"name": "frankfurter", "arguments": arguments}]},
            "You need about 347,000 KRW for 250 USD and 67,000 KRW for 350 CNY.",
        ]
    )
    with LoopbackServer() as server:
        server.script(Reply.json(RATES))
        lm = await ai.LangModel.new(script.model(), runtime=runtime)
        tools = [ai.Tool.new_py_function(frankfurter_behavior(server.url), tool_desc)]
        agent = ai.Agent(lm, tools)
        query = (
            "I want to buy 250 U.S. Dollar and 350 Chinese Yuan with my Korean Won. How much "
            "do I need to take? Get the currency data if you need."
        )
        printed = [outputs_as_the_guide_prints(resp) async for resp in agent.run(query)]
    assert printed[0].startswith("Tool call: ") and "frankfurter" in printed[0]
    assert printed[1] == f"Tool response: {RATES}"
    assert printed[2].startswith("You need about 347,000 KRW")
    # the function's request, from the model's arguments
    (sent,) = server.requests
    assert sent.path == "/latest" and sent.query == {"from": "KRW", "to": "USD,CNY"}
    # the model saw the ToolDesc as written, then the function's result
    (offered,) = [t.function for t in script.requests[0].tools]
    assert (offered.name, offered.parameters) == ("frankfurter", TOOL_DESC_PARAMETERS)
    assert offered.description.startswith("Get the latest currency exchange rates")
    tool_message = script.seen(1)[-1]
    assert tool_message.role == "tool" and json.loads(tool_message.text) == RATES


def test_tool_desc_checks_its_fields() -> None:
    """``ToolDesc`` is checked as it is made: a parameters schema that is no object schema
    is refused naming ``parameters``; ``returns`` (Ailoy's keyword) is kept."""
    desc = ai.ToolDesc(
        "f", "Does f.", {"type": "object", "properties": {}}, returns={"type": "number"}
    )
    assert (desc.name, desc.description, desc.returns) == ("f", "Does f.", {"type": "number"})
    with pytest.raises(ai.InvalidInputError) as caught:
        ai.ToolDesc("f", "Does f.", {"type": "string"})
    assert "parameters" in caught.value.errors[0]["path"]


def test_add_tool_and_add_tools(runtime: ai.Runtime) -> None:
    """``agent.add_tool(tool)`` and ``agent.add_tools([tool1, tool2])``: the agent's tools,
    in order, each offered to the model."""

    def one() -> int:
        """Return one."""
        return 1

    def two() -> int:
        """Return two."""
        return 2

    def three() -> int:
        """Return three."""
        return 3

    script = Script(["ok"])
    agent = ai.Agent(runtime.sync_bridge.run(ai.LangModel.new(script.model(), runtime=runtime)))
    tool = ai.Tool.new_py_function(one)
    agent.add_tool(tool)
    tool1, tool2 = ai.Tool.new_py_function(two), ai.Tool.new_py_function(three)
    agent.add_tools([tool1, tool2])
    assert [t.name for t in agent.tools] == ["one", "two", "three"]
    list(agent.run_sync("Which tools do you have?"))
    assert [t.function.name for t in script.requests[0].tools] == ["one", "two", "three"]


async def test_python_function_described_by_its_docstring(runtime: ai.Runtime) -> None:
    """A function with type hints and a Google-style docstring needs no ``ToolDesc``:
    ``Tool.new_py_function(frankfurter)`` reads its name, summary and argument
    descriptions. (The guide's docstring names ``unit`` where the parameter is
    ``symbols``: an ``Args`` entry for no parameter is ignored, and ``symbols`` goes
    undescribed.)"""

    def frankfurter(base: str, symbols: str):
        """
        Get the latest currency exchange rates of target currencies based on the 'base' currency

        Args:
            base: The ISO 4217 currency code to be the divider of the currency rate to be got.
            unit: The target ISO 4217 currency codes separated by comma.
        """
        return {"base": base, "rates": {s: 1.0 for s in symbols.split(",")}}

    tool = ai.Tool.new_py_function(frankfurter)
    desc = tool.get_description()
    assert desc.name == "frankfurter"
    assert desc.description == (
        "Get the latest currency exchange rates of target currencies based on the 'base' currency"
    )
    properties = desc.parameters["properties"]
    assert properties["base"] == {
        "type": "string",
        "description": "The ISO 4217 currency code to be the divider of the currency rate to be got.",
    }
    assert properties["symbols"]["type"] == "string" and "unit" not in properties
    assert sorted(desc.parameters["required"]) == ["base", "symbols"]

    script = Script(
        [
            {
                "tool_calls": [
                    {"name": "frankfurter", "arguments": {"base": "EUR", "symbols": "USD"}}
                ]
            },
            "Done.",
        ]
    )
    agent = ai.Agent(await ai.LangModel.new(script.model(), runtime=runtime))
    agent.add_tool(tool)
    outputs = [resp async for resp in agent.run("Rates?")]
    assert outputs[1].message.contents[0].value == {"base": "EUR", "rates": {"USD": 1.0}}


async def test_builtin_terminal_tool(
    runtime: ai.Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Tool.new_builtin("terminal")`` added to an agent: asked to list the home
    directory, the model calls it and a real shell lists it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("notes.txt", "photos"):
        (tmp_path / name).touch() if "." in name else (tmp_path / name).mkdir()
    script = Script(
        [
            {"tool_calls": [{"name": "terminal", "arguments": {"command": "ls ~"}}]},
            "notes and photos.",
        ]
    )
    agent = ai.Agent(await ai.LangModel.new(script.model(), runtime=runtime))
    tool = ai.Tool.new_builtin("terminal")
    agent.add_tool(tool)
    query = "List the files and directories in the home directory."
    outputs = [resp async for resp in agent.run(query)]
    assert [o.message.role for o in outputs] == ["assistant", "tool", "assistant"]
    assert outputs[0].message.tool_calls[0].function.name == "terminal"
    result = outputs[1].message.contents[0].value
    assert result["exit_code"] == 0 and result["stdout"].split() == ["notes.txt", "photos"]
    assert "notes.txt" in script.seen(1)[-1].text  # the listing reached the model


@pytest.fixture
def repositories(tmp_path: Path) -> Path:
    readme = tmp_path / "brekkylab" / "ailoy" / "README.md"
    readme.parent.mkdir(parents=True)
    readme.write_text("# Ailoy\nA lightweight library for building AI agents.\n")
    (tmp_path / "someone" / "other").mkdir(parents=True)
    return tmp_path


async def test_mcp_integration(
    runtime: ai.Runtime, repositories: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tutorial/mcp-integration: ``await MCPClient.from_stdio(command, args)``, two of its
    tools by ``client.get_tool(name)``, ``Agent(lm, tools)``, and the run printed with
    ``agent.print(resp)``. The model searches, reads the README through the MCP server
    (a real subprocess), and answers from it."""
    client = await ai.MCPClient.from_stdio(
        sys.executable, [str(REPOSITORY_SERVER), str(repositories)]
    )
    try:
        tools = [client.get_tool("search_repositories"), client.get_tool("get_file_contents")]
        assert [t.name for t in tools] == ["search_repositories", "get_file_contents"]
        readme = {"owner": "brekkylab", "repo": "ailoy", "path": "README.md"}
        script = Script(
            [
                {
                    "tool_calls": [
                        {"name": "search_repositories", "arguments": {"query": "brekkylab/ailoy"}}
                    ]
                },
                {"tool_calls": [{"name": "get_file_contents", "arguments": readme}]},
                "Ailoy is a lightweight library for building AI agents.",
            ]
        )
        lm = await ai.LangModel.new(script.model(), runtime=runtime)
        agent = ai.Agent(lm, tools)
        question = (
            "Search the repository named brekkylab/ailoy and describe what it does based on "
            "its README.md."
        )
        outputs = []
        async for resp in agent.run(question):
            agent.print(resp)
            outputs.append(resp)
    finally:
        await client.aclose()
    assert [o.message.role for o in outputs] == [
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    found = json.loads(outputs[1].message.contents[0].value)
    assert found == {"total_count": 1, "items": [{"full_name": "brekkylab/ailoy"}]}
    assert outputs[3].message.contents[0].value.startswith("# Ailoy\nA lightweight library")
    assert "A lightweight library" in script.seen(2)[-1].text  # the README reached the model
    printed = capsys.readouterr().out
    assert "search_repositories" in printed and "brekkylab/ailoy" in printed
    assert printed.rstrip().endswith("Ailoy is a lightweight library for building AI agents.")
