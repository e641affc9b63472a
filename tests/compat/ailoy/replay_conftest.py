"""The conftest.py that `replay_ailoy.py` writes beside Ailoy's replayed tests (a module of
this folder, never collected): one loopback server for every provider that Ailoy's tests
name, found through the providers' own variables, with a key for each.

The server stands in for a provider's model, reading each request as that provider's wire
carries it (OpenAI's and xAI's chat completions, Anthropic's messages, Gemini's contents):

- tools offered and no tool result since the last user message: it calls the tool that
  shares the most words with the user's message (`chosen_tool`), with its required
  arguments made from that message (`tool_arguments`);
- the last thing sent is a tool result: it answers with that result;
- otherwise it answers with the user's previous message, so a conversation's history must
  reach it for Ailoy's recall case to pass.

It also stands in for DuckDuckGo's HTML endpoint (``$FERRULE_DUCKDUCKGO_URL``), with a
results page of `SEARCH_RESULTS` results for the query it is sent (`search_page`), so
Ailoy's web-search case runs the real search tool, its request and its page reading.

When Ailoy's ``test_vectorstore.py`` runs, a real Chroma server (ferrule-chroma's
`ChromaServer`) is started where that file looks for one, ``localhost:8000``, unless the
port is taken (then the file finds whatever holds it, or skips its Chroma case as Ailoy's
does).

At the end every request must have been well formed and answered.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import socket
from typing import Any
from urllib.parse import parse_qs

import pytest
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.content.parts import ANTHROPIC, GEMINI, OPENAI
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer, RecordedRequest, Reply

KEY = "sk-ailoy-replay-0123456789"
KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "CLAUDE_API_KEY",
    "GEMINI_API_KEY",
    "XAI_API_KEY",
)
BASE_URL_VARIABLES = (
    ("OPENAI_BASE_URL", "/v1"),
    ("XAI_BASE_URL", "/v1"),
    ("ANTHROPIC_BASE_URL", ""),
    ("GOOGLE_GEMINI_BASE_URL", ""),
)
SEARCH_RESULTS = 6
SERVER = LoopbackServer()
#: Where Ailoy's vector-store tests look for Chroma.
CHROMA_PORT = 8000
_stack = contextlib.ExitStack()


def port_taken(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def start_chroma() -> None:
    if port_taken(CHROMA_PORT):
        return
    from ferrule_chroma.testing import ChromaServer

    _stack.enter_context(ChromaServer(port=CHROMA_PORT))


def _text(content: Any) -> str:
    """The text of a message's content in any of the dialects (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and "text" in part
        )
    return ""


def conversation(body: dict[str, Any]) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """What a request sends, as ``(kind, text)`` turns (kind: ``user``, ``assistant`` or
    ``tool``: a tool's result), and the tools it offers (``name``, ``description``,
    ``parameters``)."""
    turns: list[tuple[str, str]] = []
    tools: list[dict[str, Any]] = []
    if "contents" in body:  # Gemini
        for content in body["contents"]:
            parts = content.get("parts", [])
            results = [p["functionResponse"] for p in parts if "functionResponse" in p]
            if results:
                turns.append(("tool", json.dumps(results[0].get("response"))))
            elif content.get("role") == "user":
                turns.append(("user", _text(parts)))
            else:
                turns.append(("assistant", _text(parts)))
        for group in body.get("tools", []):
            for declaration in group.get("functionDeclarations", []):
                parameters = declaration.get("parametersJsonSchema", declaration.get("parameters"))
                tools.append(
                    {
                        "name": declaration["name"],
                        "description": declaration.get("description", ""),
                        "parameters": parameters or {},
                    }
                )
        return turns, tools
    for message in body.get("messages", []):
        role, content = message.get("role"), message.get("content")
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if role == "tool":  # OpenAI's
            turns.append(("tool", _text(content)))
        elif results:  # Anthropic's, in a user message
            turns.append(("tool", json.dumps(results[0].get("content"))))
        elif role == "user":
            turns.append(("user", _text(content)))
        elif role == "assistant":
            turns.append(("assistant", _text(content)))
    for tool in body.get("tools", []):
        function = tool.get("function", tool)  # OpenAI's nest the function; Anthropic's don't
        parameters = function.get("parameters", function.get("input_schema"))
        tools.append(
            {
                "name": function["name"],
                "description": function.get("description", ""),
                "parameters": parameters or {},
            }
        )
    return turns, tools


def chosen_tool(tools: list[dict[str, Any]], said: str) -> dict[str, Any]:
    """The tool whose name and description share the most words with ``said`` (the first
    offered of those that tie), as a model would pick one."""
    words = set(re.findall(r"[a-z]{4,}", said.lower()))

    def shared(tool: dict[str, Any]) -> int:
        described = f"{tool['name'].replace('_', ' ')} {tool['description']}".lower()
        return len(words & set(re.findall(r"[a-z]{4,}", described)))

    return max(tools, key=shared)  # max keeps the first of equals


def tool_arguments(parameters: dict[str, Any], said: str) -> dict[str, Any]:
    """The required arguments of a tool, as a model would fill them from ``said``."""
    arguments: dict[str, Any] = {}
    properties = parameters.get("properties", {})
    for name in parameters.get("required", []):
        schema = properties.get(name, {})
        formula = re.search(r"formula: (.+)$", said)
        zone = re.search(r"\b[A-Z][a-z]+/[A-Z][A-Za-z_]+\b", said)
        place = re.search(r"\bin ([A-Z][a-z]+)", said)
        if name == "expression":
            arguments[name] = formula.group(1) if formula else "1+1"
        elif name == "command":
            arguments[name] = "ls"
        elif name == "timezone":
            arguments[name] = zone.group(0) if zone else "UTC"
        elif name == "location":
            arguments[name] = place.group(1) if place else said
        elif "enum" in schema:
            arguments[name] = schema["enum"][0]
        elif schema.get("type") in ("integer", "number"):
            arguments[name] = 1
        elif schema.get("type") == "boolean":
            arguments[name] = False
        else:
            arguments[name] = said
    return arguments


def search_page(request: RecordedRequest) -> Reply:
    """A results page of DuckDuckGo's HTML endpoint for the query the form sends."""
    query = html.escape(parse_qs(request.body.decode())["q"][0])
    results = "".join(
        f'<div class="result results_links web-result"><h2 class="result__title">'
        f'<a class="result__a" href="https://example.org/{n}">{query}, result {n}</a></h2>'
        f'<a class="result__snippet" href="https://example.org/{n}">About {query} ({n}).</a>'
        "</div>"
        for n in range(1, SEARCH_RESULTS + 1)
    )
    page = f'<html><body><div id="links" class="results">{results}</div></body></html>'
    return Reply(200, {}, (page.encode(),), "text/html")


def answer(request: RecordedRequest) -> Reply:
    if request.path == "/html/":
        return search_page(request)
    if request.path.endswith("/messages"):
        dialect = ANTHROPIC
    elif ":streamGenerateContent" in request.path:
        dialect = GEMINI
    else:
        dialect = OPENAI
    turns, tools = conversation(request.json)
    users = [text for kind, text in turns if kind == "user"]
    last = turns[-1] if turns else ("user", "")
    if last[0] == "tool":
        return reply(dialect, f"The tool answered: {last[1][:200]}")
    if tools and last[0] == "user":
        tool = chosen_tool(tools, last[1])
        call = ToolCall("call_1", tool["name"], tool_arguments(tool["parameters"], last[1]))
        return reply(dialect, tool_calls=(call,))
    if len(users) > 1:
        return reply(dialect, f"Earlier you said: {users[-2]}")
    return reply(dialect, "Answered by the loopback server.")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # before collection: Ailoy's files decide their skips from the environment on import
    SERVER.start_in_thread()
    SERVER.script(*[answer] * 1000)
    for variable, suffix in BASE_URL_VARIABLES:
        os.environ[variable] = SERVER.url + suffix
    for variable in KEY_VARIABLES:
        os.environ[variable] = KEY
    os.environ["FERRULE_DUCKDUCKGO_URL"] = SERVER.url
    if any("test_vectorstore" in str(arg) for arg in config.args):
        start_chroma()


def pytest_unconfigure(config: pytest.Config) -> None:
    _stack.close()
    SERVER.stop_in_thread()
    print(f"\nloopback providers answered {len(SERVER.requests)} requests")
    SERVER.check()  # every request well formed and answered
