"""Ailoy 0.1 `test_agent_local.py`: an Agent on a local model (Qwen3-8B in Ailoy, the
offline SmolLM2 here by alias) with preset, Python-function and MCP tools, and a small RAG
pipeline over `VectorStore`.

The offline model is given the tools in SmolLM2's tool format and answers (printed, as
Ailoy's tests print every response), but at 135M it rarely calls one. So each tool case
also runs its tool through an agent whose model is scripted to call it (ferrule-testmodel):
that the tool was added under Ailoy's name, ran, and its result reached the model."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import ferrule as ai
import mcp
import pytest
from ferrule_kit.testing.loopback import LoopbackServer, Reply
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def runtime() -> Iterator[ai.Runtime]:
    with ai.Runtime("inproc://agent") as rt:
        yield rt


@pytest.fixture(scope="module")
def _agent(runtime: ai.Runtime) -> Iterator[ai.Agent]:
    with ai.Agent(runtime, ai.LocalModel("Qwen/Qwen3-8B")) as agent:
        yield agent


@pytest.fixture
def agent(_agent: ai.Agent) -> ai.Agent:
    _agent.clear_messages()
    _agent.clear_tools()
    return _agent


def scripted(runtime: ai.Runtime, name: str, arguments: dict, answer: str) -> ai.Agent:
    """An agent whose model calls ``name`` with ``arguments``, then says ``answer``."""
    turns = [{"tool_calls": [{"name": name, "arguments": arguments}]}, {"text": answer}]
    return ai.Agent(runtime, TestModel(turns))


def tool_results(responses: list) -> list:
    return [r.content for r in responses if r.type == "tool_call_result"]


def printed(agent: ai.Agent, query: str, capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``query`` the way Ailoy's tests do, printing each response; what was printed."""
    for resp in agent.query(query):
        agent.print(resp)
    return capsys.readouterr().out


def answered(agent: ai.Agent, query: str, capsys: pytest.CaptureFixture[str]) -> str:
    out = printed(agent, query, capsys)
    assert out.strip() and "[error]" not in out
    return out


def test_tool_call_calculator(agent: ai.Agent, runtime: ai.Runtime, capsys) -> None:
    agent.add_tools_from_preset("calculator")
    assert [t.desc.name for t in agent._tools] == ["calculator"]
    answered(agent, "Please calculate: floor(ln(exp(e))+cos(2*pi))", capsys)

    formula = "floor(ln(exp(e))+cos(2*pi))"
    with scripted(runtime, "calculator", {"expression": formula}, "It is 3.") as calc:
        calc.add_tools_from_preset("calculator")
        responses = list(calc.query(f"Please calculate this formula: {formula}"))
    assert tool_results(responses)[0]["result"] == {"value": 3}


def test_tool_call_frankfurter(agent: ai.Agent, runtime: ai.Runtime, capsys, monkeypatch) -> None:
    rates = {"amount": 1.0, "base": "KRW", "date": "2026-11-26", "rates": {"USD": 0.00068}}
    with LoopbackServer() as server:
        monkeypatch.setenv("FERRULE_FRANKFURTER_URL", server.url + "/v1/latest")
        agent.add_tools_from_preset("frankfurter")
        assert [t.desc.name for t in agent._tools] == ["frankfurter"]
        answered(agent, "How many won is 250 US dollars?", capsys)

        server.script(Reply.json(rates))
        arguments = {"base": "KRW", "symbols": "USD,CNY"}
        with scripted(runtime, "frankfurter", arguments, "About 367,000 won.") as fx:
            fx.add_tools_from_preset("frankfurter")
            responses = list(fx.query("I want to buy 250 U.S. Dollar with my Korean Won."))
    assert tool_results(responses)[0]["result"] == rates
    (request,) = server.requests
    assert request.path == "/v1/latest" and request.query == arguments


def test_tool_call_py_function(agent: ai.Agent, runtime: ai.Runtime, capsys) -> None:
    def get_current_temperature(location: str, unit: str):
        """
        Get the current temperature at a location.

        Args:
            location: The location to get the temperature for, in the format "City, Country"
            unit: The unit to return the temperature in. (choices: ["celsius", "fahrenheit"])
        Returns:
            The current temperature at the specified location in the specified units, as a float.
        """
        return 25 if unit == "celsius" else 77

    agent.add_py_function_tool(f=get_current_temperature)
    tool_names = {tool.desc.name for tool in agent._tools}
    assert "get_current_temperature" in tool_names
    answered(agent, "How is the current weather in my city Seoul?", capsys)

    arguments = {"location": "Seoul, Korea", "unit": "fahrenheit"}
    with scripted(runtime, "get_current_temperature", arguments, "77 degrees.") as weather:
        weather.add_py_function_tool(get_current_temperature)
        responses = list(weather.query("How is the weather in Seoul?"))
    assert tool_results(responses)[0]["result"] == 77


# A filesystem MCP server of our own (Ailoy's test starts @modelcontextprotocol/server-
# filesystem with npx, which needs the internet): the same tool names, kept to one root.
FILESYSTEM_SERVER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from mcp.server.mcpserver import MCPServer

    root = Path(sys.argv[1]).resolve()
    server = MCPServer("filesystem")

    def inside(path: str) -> Path:
        target = (root / path).resolve()
        if target != root and root not in target.parents:
            raise ValueError(f"{path} is outside {root}")
        return target

    @server.tool()
    def list_directory(path: str) -> str:
        \"\"\"List the entries of a directory.\"\"\"
        return "\\n".join(sorted(p.name for p in inside(path).iterdir()))

    @server.tool()
    def read_file(path: str) -> str:
        \"\"\"Read a text file.\"\"\"
        return inside(path).read_text()

    @server.tool()
    def write_file(path: str, content: str) -> str:
        \"\"\"Create or overwrite a text file.\"\"\"
        inside(path).write_text(content)
        return f"wrote {path}"

    server.run("stdio")
    """
)


def test_mcp_tools_filesystem(agent: ai.Agent, runtime: ai.Runtime, tmp_path: Path, capsys) -> None:
    script = tmp_path / "filesystem_server.py"
    script.write_text(FILESYSTEM_SERVER)
    root = tmp_path / "root"
    root.mkdir()
    params = mcp.StdioServerParameters(command=sys.executable, args=[str(script), str(root)])
    agent.add_tools_from_mcp_server("filesystem", params)
    tool_names = {tool.desc.name for tool in agent._tools}
    assert {"filesystem-list_directory", "filesystem-read_file"} <= tool_names
    agent.remove_mcp_server("filesystem")
    assert agent._tools == []

    path = root / "hello.txt"
    arguments = {"path": str(path), "content": "hello world"}
    with scripted(runtime, "filesystem-write_file", arguments, "Done.") as files:
        files.add_tools_from_mcp_server("filesystem", params, tools_to_add=["write_file"])
        assert [t.desc.name for t in files._tools] == ["filesystem-write_file"]
        responses = list(
            files.query(f"Create a file hello.txt under {root} and write 'hello world'.")
        )
    assert "error" not in tool_results(responses)[0], tool_results(responses)
    assert path.read_text() == "hello world"


def test_simple_rag_pipeline(runtime: ai.Runtime, agent: ai.Agent, capsys) -> None:
    with ai.VectorStore(
        runtime, embedding_model_name="BAAI/bge-m3", vector_store_name="faiss"
    ) as vs:
        about = (
            "Ailoy is a lightweight library for building AI applications — such as agent "
            "systems or RAG pipelines — with ease."
        )
        vs.insert(about)
        vs.insert("The Han river flows through Seoul.")
        query = "What is Ailoy?"
        items = vs.retrieve(query)
        assert items[0].document == about
        prompt = f"""
            Based on the following contexts, answer to user's question.
            Context: {[item.document for item in items]}
            Question: {query}
        """
        assert answered(agent, prompt, capsys)
    # the prompt reached the model whole
    sent = json.dumps(
        [m.to_dict() if hasattr(m, "to_dict") else str(m) for m in agent.get_messages()]
    )
    assert "Ailoy is a lightweight library" in sent
