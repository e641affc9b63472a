"""Ailoy 0.1.0's tool and RAG guides, as programs: concepts/tools and tutorial/using-tools
(``add_py_function_tool`` with and without ``desc``, the ``calculator`` and ``frankfurter``
presets), tutorial/integrate-with-mcp (``add_tools_from_mcp_server(name,
StdioServerParameters(...))``), tutorial/rag-with-vector-store (``VectorStore(rt,
"BAAI/bge-m3", "faiss")``, ``insert``, ``retrieve``, the prompt built from it) and
concepts/devices-environments (``device``). A tool's outcome needs a model that calls it:
a scripted one here; the guides' internet is a loopback server or a local MCP server."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import ferrule as ai
import pytest
from ferrule_kit.testing.loopback import LoopbackServer, Reply
from mcp import StdioServerParameters

from .conftest import Script

REPOSITORY_SERVER = Path(__file__).with_name("repository_mcp_server.py")


@pytest.fixture
def rt() -> Iterator[ai.Runtime]:
    rt = ai.Runtime()
    yield rt
    rt.stop()


def calls_then_answers(name: str, arguments: dict, answer: str) -> Script:
    return Script([{"tool_calls": [{"name": name, "arguments": arguments}]}, answer])


def tool_results(responses: list) -> list:
    return [r.content for r in responses if r.type == "tool_call_result"]


def get_current_temperature(location: str, unit: str):
    """
    Get the current temperature at a location.

    Args:
        location: The location to get the temperature for, in the format "City, Country"
        unit: The unit to return the temperature in. (choices: ["celsius", "fahrenheit"])
    Returns:
        The current temperature at the specified location in the specified units, as a float.
    """
    if unit == "celsius":
        return 25
    elif unit == "fahrenheit":
        return 77
    return


def test_py_function_tool_described_by_its_docstring(rt: ai.Runtime) -> None:
    """``agent.add_py_function_tool(get_current_temperature)`` ("Just pass the function!"):
    described from its docstring, called by the model, its result sent back."""
    arguments = {"location": "Seoul, Korea", "unit": "fahrenheit"}
    script = calls_then_answers("get_current_temperature", arguments, "It is 77 degrees.")
    with ai.Agent(rt, script.model()) as agent:
        agent.add_py_function_tool(get_current_temperature)
        responses = list(agent.query("How is the weather in Seoul?"))
    (offered,) = [t.function for t in script.requests[0].tools]
    assert offered.name == "get_current_temperature"
    assert offered.description.startswith("Get the current temperature at a location.")
    assert offered.parameters["properties"]["location"]["description"].startswith("The location")
    # the docstring's "(choices: [...])" limits the unit, as in Ailoy
    assert offered.parameters["properties"]["unit"] == {
        "type": "string",
        "enum": ["celsius", "fahrenheit"],
        "description": "The unit to return the temperature in.",
    }
    assert tool_results(responses)[0]["result"] == 77
    assert script.seen(1)[-1].text == "77"
    assert "".join(r.content for r in responses if r.type == "output_text") == "It is 77 degrees."

    kelvin = {"location": "Seoul, Korea", "unit": "kelvin"}
    script = calls_then_answers("get_current_temperature", kelvin, "Sorry.")
    with ai.Agent(rt, script.model()) as agent:
        agent.add_py_function_tool(get_current_temperature)
        (refused,) = tool_results(list(agent.query("How is the weather in Seoul, in kelvin?")))
    assert "'kelvin' is not one of ['celsius', 'fahrenheit']" in refused["error"]


def test_py_function_tool_with_desc(rt: ai.Runtime) -> None:
    """``agent.add_py_function_tool(f=..., desc={...})``: the description given overrides
    the function's own."""
    calls = []

    def a_useful_function_impl(arg0, arg1):
        calls.append((arg0, arg1))
        return arg0 + arg1

    desc = {
        "name": "add_two",
        "description": "Add two numbers.",
        "parameters": {
            "type": "object",
            "properties": {"arg0": {"type": "number"}, "arg1": {"type": "number"}},
            "required": ["arg0", "arg1"],
        },
    }
    script = calls_then_answers("add_two", {"arg0": 2, "arg1": 40}, "42.")
    with ai.Agent(rt, script.model()) as agent:
        agent.add_py_function_tool(f=a_useful_function_impl, desc=desc)
        responses = list(agent.query("Add 2 and 40."))
    (offered,) = [t.function for t in script.requests[0].tools]
    assert (offered.name, offered.description) == ("add_two", "Add two numbers.")
    assert calls == [(2, 40)] and tool_results(responses)[0]["result"] == 42


def test_calculator_preset(rt: ai.Runtime) -> None:
    """``agent.add_tools_from_preset("calculator")`` then "Evaluate sin(pi/2).": the
    calculator evaluates what the model sends."""
    script = calls_then_answers("calculator", {"expression": "sin(pi/2)"}, "It is 1.")
    with ai.Agent(rt, script.model()) as agent:
        agent.add_tools_from_preset("calculator")
        responses = list(agent.query("Evaluate sin(pi/2)."))
    assert tool_results(responses)[0]["result"] == {"value": 1}


def test_frankfurter_preset(rt: ai.Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """tutorial/using-tools: ``add_tools_from_preset("frankfurter")``: the model's
    arguments become the API's query, its rates the tool's result (api.frankfurter.dev is
    a loopback server here, moved by ``$FERRULE_FRANKFURTER_URL``)."""
    rates = {"amount": 1.0, "base": "KRW", "date": "2026-11-27", "rates": {"USD": 0.00072}}
    arguments = {"base": "KRW", "symbols": "USD"}
    script = calls_then_answers("frankfurter", arguments, "About 139,000 won.")
    with LoopbackServer() as server:
        server.script(Reply.json(rates))
        monkeypatch.setenv("FERRULE_FRANKFURTER_URL", server.url + "/v1/latest")
        with ai.Agent(rt, script.model()) as agent:
            agent.add_tools_from_preset("frankfurter")
            question = (
                "I want to buy 100 U.S. Dollar with my Korean Won. How much do I need to take?"
            )
            responses = list(agent.query(question))
    (request,) = server.requests
    assert request.path == "/v1/latest" and request.query == arguments
    assert request.headers["accept"] == "application/json"
    assert tool_results(responses)[0]["result"] == rates


def frankfurter_definition(url: str) -> dict:
    """concepts/tools' REST API definition of frankfurter, at ``url``."""
    return {
        "type": "restapi",
        "description": {
            "name": "frankfurter",
            "description": "Get the latest currency exchange rates of target currencies based on the 'base' currency",
            "parameters": {
                "type": "object",
                "properties": {
                    "base": {"type": "string", "description": "The ISO 4217 currency code."},
                    "symbols": {"type": "string", "description": "Target codes, comma-separated."},
                },
            },
        },
        "behavior": {
            "baseURL": url,
            "method": "GET",
            "headers": {"accept": "application/json"},
            "outputPath": "rates",
        },
    }


@pytest.fixture
def rest_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:
    """A loopback REST API, allowed by the http_request operator's address policy (which
    a REST tool's request goes through)."""
    with LoopbackServer() as server:
        monkeypatch.setenv("FERRULE_HTTP_REQUEST_ALLOW", "127.0.0.1")
        yield server


def test_restapi_tool(rt: ai.Runtime, rest_server: LoopbackServer) -> None:
    """concepts/tools: ``agent.add_restapi_tool(frankfurter)``, a REST API definition: the
    model's arguments become the query, ``outputPath`` narrows the reply to its rates."""
    rates = {"amount": 1.0, "base": "USD", "date": "2026-11-27", "rates": {"KRW": 1388.5}}
    rest_server.script(Reply.json(rates))
    arguments = {"base": "USD", "symbols": "KRW"}
    script = calls_then_answers("frankfurter", arguments, "1 USD is 1388.5 KRW.")
    with ai.Agent(rt, script.model()) as agent:
        agent.add_restapi_tool(frankfurter_definition(rest_server.url + "/v1/latest"))
        responses = list(agent.query("How many won is a dollar?"))
    (request,) = rest_server.requests
    assert (request.method, request.path, request.query) == ("GET", "/v1/latest", arguments)
    assert request.headers["accept"] == "application/json"
    assert tool_results(responses)[0]["result"] == {"KRW": 1388.5}
    assert script.seen(1)[-1].text == '{"KRW": 1388.5}'


def test_restapi_tool_authenticators(rt: ai.Runtime, rest_server: LoopbackServer) -> None:
    """``add_restapi_tool(tool_def, authenticator=BearerAuthenticator(key))`` and a function
    authenticator (concepts/tools' nytimes one, adding ``api_key`` to the query): each
    request is signed; a ``${name}`` in ``baseURL`` is filled from that argument, the rest
    go in the query. A refused request is a tool error the model reads, without the key."""
    definition = {
        "type": "restapi",
        "description": {
            "name": "trending",
            "description": "Trending movies.",
            "parameters": {
                "type": "object",
                "properties": {"time_window": {"type": "string"}, "page": {"type": "integer"}},
            },
        },
        "behavior": {
            "baseURL": rest_server.url + "/3/trending/movie/${time_window}",
            "method": "GET",
            "authentication": "bearer",
            "outputPath": "results[:1].title",
        },
    }
    rest_server.script(Reply.json({"results": [{"title": "Holm"}, {"title": "Tide"}]}))
    script = calls_then_answers("trending", {"time_window": "week", "page": 2}, "Holm.")
    with ai.Agent(rt, script.model()) as agent:
        agent.add_restapi_tool(definition, authenticator=ai.BearerAuthenticator("tmdb-key-1"))
        responses = list(agent.query("What is trending?"))
    (request,) = rest_server.requests
    assert (request.path, request.query) == ("/3/trending/movie/week", {"page": "2"})
    assert request.headers["authorization"] == "Bearer tmdb-key-1"
    assert tool_results(responses)[0]["result"] == ["Holm"]

    def nytimes_authenticator(request):
        from urllib.parse import parse_qsl, urlencode, urlparse

        parts = urlparse(request.get("url", ""))
        qs = {**dict(parse_qsl(parts.query)), "api_key": "nyt-key-2"}
        parts = parts._replace(query=urlencode(qs))
        return {**request, "url": parts.geturl()}

    rest_server.script(Reply.json({"status": "denied"}, status=401))
    script = calls_then_answers("trending", {"time_window": "day"}, "It failed.")
    with ai.Agent(rt, script.model()) as agent:
        agent.add_restapi_tool(definition, authenticator=nytimes_authenticator)
        responses = list(agent.query("What is trending?"))
    assert rest_server.requests[-1].query == {"api_key": "nyt-key-2"}
    (failed,) = tool_results(responses)
    assert "HTTP 401" in failed["error"] and "nyt-key-2" not in json.dumps(failed)
    assert "nyt-key-2" not in script.seen(1)[-1].text


def test_restapi_tool_body_template(rt: ai.Runtime, rest_server: LoopbackServer) -> None:
    """A ``body`` template's ``${name}`` is filled from that argument; the others still go
    in the query, as Ailoy sent them."""
    definition = {
        "type": "restapi",
        "description": {
            "name": "search",
            "description": "Search.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            },
        },
        "behavior": {
            "baseURL": rest_server.url + "/search",
            "method": "POST",
            "headers": {"content-type": "application/json"},
            "body": '{"q": "${query}"}',
        },
    }
    rest_server.script(Reply.json({"hits": 3}))
    script = calls_then_answers("search", {"query": "tides", "limit": 5}, "Three.")
    with ai.Agent(rt, script.model()) as agent:
        agent.add_restapi_tool(definition)
        responses = list(agent.query("Search tides."))
    (request,) = rest_server.requests
    assert (request.method, request.query, request.json) == ("POST", {"limit": "5"}, {"q": "tides"})
    assert tool_results(responses)[0]["result"] == {"hits": 3}


def test_keyed_presets_point_to_add_restapi_tool(rt: ai.Runtime) -> None:
    """concepts/tools' ``add_tools_from_preset("tmdb", authenticator=BearerAuthenticator(key))``
    and ``"nytimes"``: not shipped (third parties' APIs); the refusal names the preset and
    says how to add such an API instead."""
    with ai.Agent(rt, Script([]).model()) as agent:
        for preset in ("tmdb", "nytimes"):
            with pytest.raises(ai.InvalidInputError, match="add_restapi_tool") as caught:
                agent.add_tools_from_preset(preset, authenticator=ai.BearerAuthenticator("key"))
            assert [e["path"] for e in caught.value.errors] == ["preset_name"]
        assert agent.get_tools() == []


def test_restapi_tool_definition_is_checked(rt: ai.Runtime) -> None:
    """A definition is checked when added: its bad field is named, nothing is added."""
    good = frankfurter_definition("https://api.frankfurter.dev/v1/latest")
    bad_method = {**good, "behavior": {**good["behavior"], "method": "FETCH"}}
    bad_path = {**good, "behavior": {**good["behavior"], "outputPath": "rates[["}}
    with ai.Agent(rt, Script([]).model()) as agent:
        for definition, field in (
            ({**good, "type": "builtin"}, "tool_def.type"),
            (bad_method, "tool_def.behavior.method"),
            (bad_path, "tool_def.behavior.outputPath"),
        ):
            with pytest.raises(ai.InvalidInputError) as caught:
                agent.add_restapi_tool(definition)
            assert [e["path"] for e in caught.value.errors] == [field]
        assert agent.get_tools() == []


@pytest.fixture
def repositories(tmp_path: Path) -> Path:
    readme = tmp_path / "brekkylab" / "ailoy" / "README.md"
    readme.parent.mkdir(parents=True)
    readme.write_text("# Ailoy\nA lightweight library for building AI agents.\n")
    return tmp_path


def test_mcp_server_tools(rt: ai.Runtime, repositories: Path, capsys) -> None:
    """tutorial/integrate-with-mcp: ``agent.add_tools_from_mcp_server("github",
    StdioServerParameters(command=..., args=[...]))`` starts the server (a real
    subprocess; the guide's ``npx`` GitHub server is a local one of the same tools), its
    tools are added as ``github-<tool>``, and the model's calls reach it."""
    readme = {"owner": "brekkylab", "repo": "ailoy", "path": "README.md"}
    script = calls_then_answers("github-get_file_contents", readme, "It builds AI agents.")
    with ai.Agent(rt, script.model()) as agent:
        agent.add_tools_from_mcp_server(
            "github",
            StdioServerParameters(
                command=sys.executable, args=[str(REPOSITORY_SERVER), str(repositories)]
            ),
        )
        names = sorted(t.desc.name for t in agent.get_tools())
        assert names == ["github-get_file_contents", "github-search_repositories"]
        question = (
            "Search the repository named brekkylab/ailoy and describe what it does based on "
            "its README.md."
        )
        for resp in agent.query(question):
            agent.print(resp)
    assert "# Ailoy" in script.seen(1)[-1].text  # the README reached the model
    assert "It builds AI agents." in capsys.readouterr().out


# -- RAG ----------------------------------------------------------------------------------


def test_rag_with_vector_store(rt: ai.Runtime) -> None:
    """tutorial/rag-with-vector-store, whole: ``with Agent(rt, LocalModel(...)) as agent,
    VectorStore(rt, "BAAI/bge-m3", "faiss") as vs``, ``vs.insert(text, metadata=...)``,
    ``vs.retrieve(query, top_k=5)``, a prompt of ``[item.document for item in items]``,
    ``agent.query(prompt)``. The nearest item is the one about Ailoy and it reaches the
    model in the prompt; leaving ``with`` deletes the components."""
    script = Script(["Ailoy is a lightweight library for building AI applications."])
    with ai.Agent(rt, script.model()) as agent, ai.VectorStore(rt, "BAAI/bge-m3", "faiss") as vs:
        vs.insert(
            "Ailoy is a lightweight library for building AI applications",
            metadata={"topic": "Ailoy"},
        )
        vs.insert("The ferry to Holm leaves at nine.", metadata={"topic": "ferry"})
        query = "What is Ailoy?"
        items = vs.retrieve(query, top_k=5)
        assert [item.metadata["topic"] for item in items] == ["Ailoy", "ferry"]
        prompt = f"""
            Based on the provided contexts, try to answer user's question.
            Context: {[item.document for item in items]}
            Question: {query}
        """
        answer = "".join(r.content for r in agent.query(prompt))
        stores = {vs.name, vs.embedding_model.name}
        assert stores <= set(rt.kernel.components())
    assert answer.startswith("Ailoy is a lightweight library")
    sent = script.seen()[-1].text
    assert "['Ailoy is a lightweight library for building AI applications'," in sent
    assert not stores & set(rt.kernel.components())


def test_rag_on_the_local_model(rt: ai.Runtime) -> None:
    """The same program on the local model (Qwen3-8B's id, the offline SmolLM2): it answers."""
    with (
        ai.Agent(rt, ai.LocalModel("Qwen/Qwen3-8B")) as agent,
        ai.VectorStore(rt, "BAAI/bge-m3", "faiss") as vs,
    ):
        vs.insert(
            "Ailoy is a lightweight library for building AI applications",
            metadata={"topic": "Ailoy"},
        )
        items = vs.retrieve("What is Ailoy?", top_k=5)
        prompt = f"Context: {[item.document for item in items]}\nQuestion: What is Ailoy?"
        responses = list(agent.query(prompt))
    assert {r.type for r in responses} == {"output_text"}
    assert "".join(r.content for r in responses).strip()


# -- devices ------------------------------------------------------------------------------


def test_devices(rt: ai.Runtime) -> None:
    """concepts/devices-environments: ``LocalModel(id, device=0)`` and ``VectorStore(...,
    embedding_model_attrs={"device": 0})`` run on device 0, the CPU ferrule's local
    models use; another device is refused, naming ``device``."""
    agent = ai.Agent(rt, ai.LocalModel("Qwen/Qwen3-8B", device=0))
    vs = ai.VectorStore(rt, "BAAI/bge-m3", "faiss", embedding_model_attrs={"device": 0})
    vs.insert("on the CPU")
    assert vs.retrieve("CPU", top_k=1)[0].document == "on the CPU"
    agent.delete()
    vs.delete()
    with pytest.raises(ai.InvalidInputError) as caught:
        ai.LocalModel("Qwen/Qwen3-8B", device=1)
    assert [e["path"] for e in caught.value.errors] == ["device"]
    with pytest.raises(ai.InvalidInputError) as caught:
        ai.VectorStore(rt, "BAAI/bge-m3", "faiss", embedding_model_attrs={"device": 1})
    assert "device" in json.dumps(caught.value.errors)
