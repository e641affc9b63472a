"""Ailoy 0.2 `test_tools.py`: the builtin tools (``Tool.new_builtin``), Python function tools
(``Tool.new_py_function``) and MCP tools (``MCPClient``), each called directly as Ailoy's
test calls them.

Where Ailoy's test reaches the internet, the same call reaches a loopback server here:
DuckDuckGo's HTML endpoint (a results page in its shape, through ``$FERRULE_DUCKDUCKGO_URL``),
the page web_fetch reads (through ``$FERRULE_WEB_FETCH_PROXY``, a proxy on loopback), and
``uvx mcp-server-time`` (our own time server of the same tools, started as a subprocess)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs
from zoneinfo import ZoneInfo

import ferrule as ai
import pytest
from ferrule.tools import ToolError
from ferrule_kit.testing.loopback import LoopbackServer, Reply

TIME_SERVER = Path(__file__).with_name("mcp_time_server.py")

#: (title, link, snippet) of the results page, after one ad.
RESULTS = [
    (
        "Ailoy: a lightweight agent library",
        "https://github.com/brekkylab/ailoy",
        "Build agents in Python &amp; JS.",
    ),
    (
        "Ailoy documentation",
        "https://brekkylab.github.io/ailoy/",
        "Tutorials and the API reference.",
    ),
    ("Ailoy on PyPI", "https://pypi.org/project/ailoy-py/", "pip install ailoy-py"),
    (
        "Running Qwen3 locally with Ailoy",
        "https://blog.example.org/ailoy-qwen3",
        "A walk through local inference.",
    ),
    ("Ailoy 0.2 released", "https://news.example.com/ailoy-0-2", "Tools, MCP and vector stores."),
    ("Ailoy vs others", "https://compare.example.net/ailoy", "A comparison of agent toolkits."),
]


def results_page() -> bytes:
    """A page of DuckDuckGo's HTML endpoint (html.duckduckgo.com/html/): an ad, then results."""
    blocks = [
        '<div class="result results_links result--ad"><h2 class="result__title">'
        '<a class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example">Ad</a>'
        '</h2><a class="result__snippet" href="#">Sponsored.</a></div>'
    ]
    for title, link, snippet in RESULTS:
        blocks.append(
            '<div class="result results_links web-result"><h2 class="result__title">'
            f'<a rel="nofollow" class="result__a" href="{link}">{title}</a></h2>'
            f'<a class="result__snippet" href="{link}">{snippet}</a></div>'
        )
    return f'<html><body><div id="links" class="results">{"".join(blocks)}</div></body></html>'.encode()


DOCS_PAGE = b"""<html><head><title>Ailoy</title><script>var x = 1;</script></head><body>
<nav><a href="/">Home</a></nav>
<h1>Ailoy</h1><p>Ailoy is a lightweight library for building <b>AI agents</b>.</p>
<footer>footer</footer></body></html>"""


@pytest.fixture
async def loopback(monkeypatch: pytest.MonkeyPatch):
    async with LoopbackServer() as server:
        monkeypatch.setenv("FERRULE_DUCKDUCKGO_URL", server.url)
        monkeypatch.setenv("FERRULE_WEB_FETCH_PROXY", f"{server.url}/fetch")
        monkeypatch.setenv("FERRULE_HTTP_REQUEST_ALLOW", "127.0.0.1")
        yield server


async def test_builtin_terminal_tool(tmp_path: Path) -> None:
    tool = ai.Tool.new_builtin("terminal")
    command = "pwd"

    tool_result = await tool(command=command)
    process_run = subprocess.run([command], stdout=subprocess.PIPE)
    assert tool_result["stdout"] == process_run.stdout.decode()

    # the outcome: a real shell ran it, with the model's cwd, env and stdin
    assert tool_result["exit_code"] == 0
    ran = await tool(
        command='pwd; echo "$WHO"; cat; exit 4', cwd=str(tmp_path), env={"WHO": "ailoy"}, stdin="in"
    )
    assert ran["stdout"] == f"{tmp_path}\nailoy\nin"
    assert ran["exit_code"] == 4
    assert tool.get_description().name == "terminal"
    assert tool.get_description().parameters["required"] == ["command"]


async def test_builtin_web_search_duckduckgo_tool(loopback: LoopbackServer) -> None:
    loopback.script(Reply(200, {}, [results_page()], "text/html"))
    tool = ai.Tool.new_builtin("web_search_duckduckgo")
    tool_result = await tool(query="Ailoy", max_results=5)
    assert "results" in tool_result
    assert tool_result["results"].startswith("Found 5 search results")

    # the outcome: DuckDuckGo's form was posted, the first five results shown in order
    (request,) = loopback.requests
    assert (request.method, request.path) == ("POST", "/html/")
    assert parse_qs(request.body.decode())["q"] == ["Ailoy"]
    text = tool_result["results"]
    for position, (title, link, _) in enumerate(RESULTS[:5], 1):
        assert f"{position}. {title}\n   URL: {link}\n" in text
    assert "Summary: Build agents in Python & JS." in text
    assert RESULTS[5][1] not in text and "Ad" not in text.split("\n")[2]


async def test_builtin_web_fetch_tool(loopback: LoopbackServer) -> None:
    loopback.script(Reply(200, {}, [DOCS_PAGE], "text/html"))
    tool = ai.Tool.new_builtin("web_fetch")
    tool_result = await tool(url="https://brekkylab.github.io/ailoy/")
    assert "results" in tool_result

    # the outcome: the page asked for, read as Markdown without its script and navigation
    (request,) = loopback.requests
    assert request.path == "/fetch"
    assert request.query == {"url": "https://brekkylab.github.io/ailoy/"}
    page = tool_result["results"]
    assert "# Ailoy" in page
    assert "Ailoy is a lightweight library for building **AI agents**." in page
    assert "var x" not in page and "Home" not in page and "footer" not in page


async def test_python_async_function_tool() -> None:
    async def tool_temperature(location: str, unit: Literal["Celsius", "Fahrenheit"] = "Celsius"):
        """
        Get temperature of the provided location
        Args:
            location: The city name
            unit: The unit of temperature
        Returns:
            int: The temperature
        """
        await asyncio.sleep(0.2)
        return 35 if unit == "Celsius" else 95

    def tool_temperature_sync(location: str, unit: Literal["Celsius", "Fahrenheit"] = "Celsius"):
        """
        Get temperature of the provided location
        Args:
            location: The city name
            unit: The unit of temperature
        Returns:
            int: The temperature
        """
        return 35 if unit == "Celsius" else 95

    tool = ai.Tool.new_py_function(tool_temperature)
    assert await tool(location="Seoul") == 35
    assert await tool(location="Seoul", unit="Fahrenheit") == 95
    assert await tool.call(**{"location": "Seoul"}) == 35
    assert await tool.call(**{"location": "Seoul", "unit": "Fahrenheit"}) == 95

    tool_sync = ai.Tool.new_py_function(tool_temperature_sync)
    assert await tool_sync(location="Seoul") == 35
    assert await tool_sync(location="Seoul", unit="Fahrenheit") == 95
    assert await tool_sync.call(**{"location": "Seoul"}) == 35
    assert await tool_sync.call(**{"location": "Seoul", "unit": "Fahrenheit"}) == 95
    assert tool_sync.call_sync(location="Seoul") == 35
    assert tool_sync.call_sync(location="Seoul", unit="Fahrenheit") == 95

    # the outcome: what the model would see, read from the signature and docstring
    desc = tool.get_description()
    assert (desc.name, desc.description) == (
        "tool_temperature",
        "Get temperature of the provided location",
    )
    assert desc.parameters["required"] == ["location"]
    assert desc.parameters["properties"]["unit"]["enum"] == ["Celsius", "Fahrenheit"]
    assert desc.parameters["properties"]["location"]["description"] == "The city name"
    # and the arguments are checked as a model's would be
    with pytest.raises(ToolError, match=r"\$\.unit: 'Kelvin' is not one of"):
        await tool(location="Seoul", unit="Kelvin")


async def test_mcp_tools() -> None:
    mcp_client = await ai.MCPClient.from_stdio(sys.executable, [str(TIME_SERVER)])
    try:
        current_time_tool = mcp_client.tools[0]
        tool_result = json.loads(await current_time_tool(timezone="Asia/Seoul"))
        assert tool_result["timezone"] == "Asia/Seoul"
        assert abs(
            datetime.fromisoformat(tool_result["datetime"])
            - datetime.now(tz=ZoneInfo("Asia/Seoul"))
        ) < timedelta(seconds=5)

        current_time_tool = mcp_client.get_tool("get_current_time")
        tool_result = json.loads(current_time_tool.call_sync(timezone="Asia/Seoul"))
        assert tool_result["timezone"] == "Asia/Seoul"
        assert abs(
            datetime.fromisoformat(tool_result["datetime"])
            - datetime.now(tz=ZoneInfo("Asia/Seoul"))
        ) < timedelta(seconds=5)

        # the outcome: the server's tools as listed, each a tool an agent can take
        assert [t.name for t in mcp_client.tools] == ["get_current_time", "convert_time"]
        assert mcp_client.get_tool("no_such_tool") is None
        converted = json.loads(
            await mcp_client.get_tool("convert_time")(
                source_timezone="UTC", time="12:00", target_timezone="Asia/Seoul"
            )
        )
        assert converted["target"].endswith("T21:00:00+09:00")
    finally:
        await mcp_client.aclose()
