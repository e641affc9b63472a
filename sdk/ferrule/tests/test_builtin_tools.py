"""Ailoy 0.2's builtin tools (`Tool.new_builtin`) and `MCPClient` in an agent's run (the
scripted TestModel calls them; the tool plugins' operators run for real: a subprocess, the
loopback DuckDuckGo page, the loopback proxy for web_fetch), their settings, and the
errors a user gets for a wrong kind or setting."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from ferrule import Agent, AsyncRuntime, MCPClient, Tool
from ferrule.tools import ToolError
from ferrule.tools.presets import PRESETS
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing.loopback import LoopbackServer, Reply
from ferrule_testmodel import TestModel

SEARCH_PAGE = (
    b'<html><body><div id="links" class="results"><div class="result web-result"><h2 class="result__title">'
    b'<a class="result__a" href="https://example.org/one">One &amp; only</a></h2>'
    b'<a class="result__snippet" href="https://example.org/one">The first.</a></div></div></body></html>'
)


def call(name: str, **arguments: object) -> dict:
    return {"id": f"call_{name}", "name": name, "arguments": arguments}


async def tool_results(rt: AsyncRuntime, tools: list, *calls: dict) -> list:
    model = TestModel([{"tool_calls": list(calls)}, "done"])
    agent = Agent(rt, model, tools=tools)
    try:
        responses = [r async for r in agent.aquery("go")]
    finally:
        await agent.adelete()
    return [r.content for r in responses if r.type == "tool_call_result"]


@pytest.fixture
async def rt():
    async with AsyncRuntime() as runtime:
        yield runtime


async def test_terminal_in_a_run_with_its_working_directory_pinned(rt, tmp_path: Path) -> None:
    tool = Tool.new_builtin("terminal", cwd=str(tmp_path), allow=["pwd", "ls"])
    assert set(tool.parameters["properties"]) == {"command", "stdin"}  # cwd is the host's
    (result, moved, refused) = await tool_results(
        rt,
        [tool],
        call("terminal", command="pwd"),
        call("terminal", command="pwd", cwd="/"),
        call("terminal", command="rm -rf x"),
    )
    assert result["result"]["stdout"] == f"{tmp_path}\n"
    # the model's own cwd is refused, not silently replaced: it learns it cannot
    assert moved["error"].startswith("host_policy: cwd: its 'cwd', which the host fixed")
    assert "'rm' is not in the allow-list" in refused["error"]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        # issue 31, reproduction 1: the model's allow-list over the host's
        ({"command": "id", "allow": ["id"]}, "allow"),
        ({"command": "echo hi", "timeout": 3600}, "timeout"),
        ({"command": "echo hi", "max_output_bytes": 10**8}, "max_output_bytes"),
        # PATH or LD_PRELOAD would change what a listed program runs
        ({"command": "echo hi", "env": {"PATH": "/tmp"}}, "env"),
    ],
)
async def test_a_models_arguments_never_widen_the_hosts_terminal_policy(
    rt, monkeypatch, tmp_path: Path, arguments: dict, field: str
) -> None:
    monkeypatch.setenv("FERRULE_TERMINAL_ALLOW", "echo")
    tool = Tool.new_builtin("terminal")
    assert set(tool.parameters["properties"]) == {"command", "cwd", "stdin"}
    (refused,) = await tool_results(rt, [tool], {**call("terminal"), "arguments": arguments})
    assert refused["error"].startswith(f"host_policy: {field}: "), refused
    assert "set by the host" in refused["error"]
    with pytest.raises(InvalidInputError) as direct:  # called directly, the same
        await tool.call(**arguments)
    assert direct.value.kind == "host_policy"
    assert direct.value.errors[0]["path"] == f"$.{field}"


async def test_a_models_argument_the_tool_does_not_offer_is_refused(rt) -> None:
    (refused,) = await tool_results(
        rt, ["web_fetch"], call("web_fetch", url="https://example.org/", proxy_url="http://x/")
    )
    assert refused["error"].startswith("host_policy: proxy_url: ")
    (unknown,) = await tool_results(
        rt, ["web_fetch"], call("web_fetch", url="https://example.org/", colour="red")
    )
    assert unknown["error"].startswith("invalid_input: colour: the tool 'web_fetch' has no such")


async def test_search_and_fetch_presets_in_a_run(rt, monkeypatch) -> None:
    async with LoopbackServer() as server:
        monkeypatch.setenv("FERRULE_DUCKDUCKGO_URL", server.url)
        monkeypatch.setenv("FERRULE_WEB_FETCH_PROXY", f"{server.url}/fetch")
        monkeypatch.setenv("FERRULE_HTTP_REQUEST_ALLOW", "127.0.0.1")

        def by_path(request) -> Reply:  # the two calls may run in either order
            if request.path == "/html/":
                return Reply(200, {}, [SEARCH_PAGE], "text/html")
            return Reply(200, {}, [b"<h1>One</h1><p>Only page.</p>"], "text/html")

        server.script(by_path, by_path)
        found, page = await tool_results(
            rt,
            ["web_search_duckduckgo", "web_fetch"],
            call("web_search_duckduckgo", query="one"),
            call("web_fetch", url="https://example.org/one"),
        )
    assert found["result"]["results"] == (
        "Found 1 search results:\n\n1. One & only\n   URL: https://example.org/one\n"
        "   Summary: The first.\n"
    )
    assert page["result"] == {"results": "# One\n\nOnly page."}
    assert "terminal" not in PRESETS  # a shell is added by code only


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: Tool.new_builtin("shell"), "kind"),
        (lambda: Tool.new_builtin("terminal", timeout_ms=5), "timeout_ms"),
        (
            lambda: Tool.new_builtin("web_search_duckduckgo", requests_per_minute=5),
            "requests_per_minute",
        ),
    ],
)
def test_a_wrong_kind_or_setting_is_named(make, field: str) -> None:
    with pytest.raises(InvalidInputError) as error:
        make()
    assert error.value.errors[0]["path"] == field


MCP_SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("adder")

    @server.tool()
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

    @server.tool()
    def fail(reason: str) -> str:
        \"\"\"Always fails.\"\"\"
        raise ToolError(reason)

    server.run("stdio")
    """
)


async def test_mcp_client_tools_in_a_run_and_called_directly(rt, tmp_path: Path) -> None:
    script = tmp_path / "adder.py"
    script.write_text(MCP_SERVER)
    client = await MCPClient.from_stdio(sys.executable, [str(script)])
    try:
        assert [t.name for t in client.tools] == ["add", "fail"]
        assert client.get_tool("add").get_description().description == "Add two integers."
        (added,) = await tool_results(rt, client.tools, call("add", a=2, b=3))
        assert added["result"] == {"result": 5}
        assert await client.get_tool("add")(a=40, b=2) == {"result": 42}
        with pytest.raises(ToolError, match="no luck"):
            await client.get_tool("fail")(reason="no luck")
    finally:
        await client.aclose()
    assert client.tools == []
