"""Every kind of agent tool, run by an Agent on the test model: Python functions (sync and
async, schemas from hints and docstrings), JSON-schema tools, REST endpoints (an aiohttp
server on loopback), the calculator and http_request presets (their operator plugins), and
MCP servers (real subprocesses over stdio and streamable HTTP); concurrency and failures."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from typing import Literal, Optional

import attrs
import pydantic
import pytest
from aiohttp import web
from ferrule import Agent, MCPServer, Runtime, Tool, tool
from ferrule.tools import ToolContext, parse_docstring
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def run_tools(rt, tools, *calls, **agent_options):
    """One turn calling ``calls``, then a final text; returns the tool-result contents."""
    model = TestModel([{"tool_calls": list(calls)}, "done"])
    with Agent(rt, model, tools=tools, **agent_options) as agent:
        responses = list(agent.query("go"))
        assert responses[-1].type == "output_text", responses[-1]
        sent = agent.runtime.kernel.component(agent._component).requests
    return [r.content for r in responses if r.type == "tool_call_result"], sent


# -- schemas from functions ----------------------------------------------------------------------


@attrs.frozen
class Point:
    x: float
    y: float


@attrs.frozen
class Route:
    name: str
    stops: list[Point]


def plan(
    route: Route,
    mode: Literal["walk", "bike"],
    note: Optional[str] = None,  # noqa: UP045 (the spelling users write; it must work)
    speed: int = 5,
) -> dict:
    """Plan a trip along a route.

    Args:
        route: The route to follow.
        mode (str): How to travel;
            walking is slower.
        note: Anything to remember.
    """
    assert isinstance(route, Route) and all(isinstance(p, Point) for p in route.stops)
    return {"stops": len(route.stops), "mode": mode, "note": note, "speed": speed}


def test_function_schema_from_hints_and_google_docstring(rt):
    schema = Tool.from_function(plan).to_dict()["function"]
    assert schema["name"] == "plan" and schema["description"] == "Plan a trip along a route."
    properties = schema["parameters"]["properties"]
    assert properties["mode"] == {
        "enum": ["walk", "bike"],
        "description": "How to travel; walking is slower.",
    }
    assert properties["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert properties["speed"] == {"type": "integer", "default": 5}
    stops = properties["route"]["properties"]["stops"]
    assert stops["type"] == "array" and stops["items"]["properties"]["x"] == {"type": "number"}
    assert schema["parameters"]["required"] == ["route", "mode"]
    # nested attrs arguments arrive as attrs instances
    route = {"name": "r", "stops": [{"x": 0, "y": 1}, {"x": 2.5, "y": 3}]}
    results, sent = run_tools(rt, [plan], call("plan", route=route, mode="bike"))
    assert results[0]["result"] == {"stops": 2, "mode": "bike", "note": None, "speed": 5}
    assert sent[0].tools[0].function.parameters == schema["parameters"]


def test_bad_arguments_give_the_model_an_error_naming_the_field(rt):
    route = {"name": "r", "stops": [{"x": "far", "y": 1}]}
    results, sent = run_tools(
        rt,
        [plan],
        call("plan", route=route, mode="car"),
        call("plan", route={"name": "r", "stops": []}),
    )
    assert "$.mode" in results[0]["error"] and "$.route.stops[0].x" in results[0]["error"]
    assert "'mode' is a required property" in results[1]["error"]
    assert "error" in json.loads(sent[1].messages[-1].text), "the model saw the error"


class Window(pydantic.BaseModel):
    start: int
    days: int = pydantic.Field(default=7, ge=1, le=31)


class Search(pydantic.BaseModel):
    """What to search for."""

    query: str
    window: Window | None = None
    tags: list[str] = []


def search(params: Search, extra: list[Window] | None = None) -> str:
    """Search the notes."""
    assert isinstance(params, Search)
    assert params.window is None or isinstance(params.window, Window)
    assert all(isinstance(w, Window) for w in extra or [])
    days = params.window.days if params.window else None
    return f"{params.query}|{days}|{len(extra or [])}"


async def search_stream(params: Search):  # an async generator tool, as Agno's cookbook has
    """Search, yielding what it finds."""
    yield f"found {params.query}"


def test_pydantic_parameters_have_pydantic_schemas_and_arrive_as_models(rt):
    parameters = Tool.from_function(search).to_dict()["function"]["parameters"]
    params = parameters["properties"]["params"]
    assert params["properties"]["query"]["type"] == "string" and params["required"] == ["query"]
    days = parameters["$defs"]["Window"]["properties"]["days"]
    assert (days["minimum"], days["maximum"]) == (1, 31)  # the tool's $defs, read from its root
    results, _ = run_tools(
        rt,
        [search, search_stream],
        call("search", params={"query": "q", "window": {"start": 1, "days": 3}}),
        call("search", params={"query": "q"}, extra=[{"start": 2}]),
        call("search", params={"query": "q", "window": {"start": 1, "days": 99}}),
        call("search_stream", params={"query": "oslo"}),
    )
    assert [r.get("result") for r in results[:2]] == ["q|3|0", "q|None|1"]
    assert "$.params.window" in results[2]["error"]  # pydantic's limits, checked by the schema
    assert results[3]["result"] == "found oslo"


@pytest.mark.parametrize(
    "doc",
    [
        """Look a word up.

        Parameters
        ----------
        word : str
            The word to look up,
            in any case.
        lang : str
            A language code.

        Returns
        -------
        str
        """,
        """Look a word up.

        :param word: The word to look up,
            in any case.
        :param str lang: A language code.
        :returns: the definition
        """,
        """Look a word up.

        Args:
            word: The word to look up,
                in any case.
            lang (str): A language code.

        Returns:
            The definition.
        """,
    ],
    ids=["numpy", "rest", "google"],
)
def test_docstring_styles(doc):
    description, params = parse_docstring(doc)
    assert description == "Look a word up."
    assert params == {"word": "The word to look up, in any case.", "lang": "A language code."}


def test_docstring_description_keeps_paragraphs_and_leaves_sections_out():
    description, params = parse_docstring(
        """Find a ship
        by its name.

        Names are matched
        without case.

        Args:
            name: The ship's name.

        Raises:
            KeyError: no such ship.
        """
    )
    assert description == "Find a ship by its name.\n\nNames are matched without case."
    assert params == {"name": "The ship's name."}
    assert parse_docstring("") == ("", {})


def test_tool_decorator_options_and_context():
    @tool(name="lookup", description="Find things.", timeout=3)
    async def find(query: str, context: ToolContext) -> str:
        return query

    assert (find.name, find.description, find.timeout) == ("lookup", "Find things.", 3)
    assert list(find.parameters["properties"]) == ["query"], "the context is not an argument"
    with pytest.raises(InvalidInputError, match="tool name"):
        Tool.from_function(find.handler, name="has space")


def test_sync_tools_run_off_the_loop_and_async_tools_on_it(rt):
    threads = {}

    def sync_tool() -> str:
        """Sync."""
        threads["sync"] = threading.current_thread().name
        return "s"

    async def async_tool(context: ToolContext) -> str:
        """Async."""
        threads["async"] = threading.current_thread().name
        return context.tool_call.id

    results, _ = run_tools(rt, [sync_tool, async_tool], call("sync_tool"), call("async_tool"))
    assert [r["result"] for r in results] == ["s", "call_2"]
    assert threads["async"] == "ferrule-runtime" and threads["sync"] != "ferrule-runtime"


# -- concurrency and failures --------------------------------------------------------------------


def test_calls_in_one_turn_run_concurrently_and_keep_their_order(rt):
    first_waiting, second_done = asyncio.Event(), asyncio.Event()
    finished = []

    async def first() -> str:
        """Waits for the second: deadlocks unless both run at once."""
        first_waiting.set()
        await second_done.wait()
        finished.append("first")
        return "one"

    async def second() -> str:
        """Runs while the first waits."""
        await first_waiting.wait()
        finished.append("second")
        second_done.set()
        return "two"

    results, sent = run_tools(rt, [first, second], call("first"), call("second"), tool_timeout=10)
    assert finished == ["second", "first"]
    assert [r["result"] for r in results] == ["one", "two"], "results keep the call order"
    assert [m.tool_call_id for m in sent[1].messages[-2:]] == ["call_1", "call_2"]


def test_sync_calls_run_concurrently_in_threads(rt):
    barrier = threading.Barrier(3, timeout=10)

    def meet(n: int) -> int:
        """Waits until all three calls are running."""
        barrier.wait()
        return n

    results, _ = run_tools(rt, [meet], *(call("meet", n=i) for i in range(3)))
    assert [r["result"] for r in results] == [0, 1, 2]


def test_failing_tools_give_error_results_and_the_run_goes_on(rt):
    def boom() -> str:
        """Raises."""
        raise RuntimeError("kaput")

    async def slow() -> str:
        """Too slow."""
        await asyncio.sleep(30)
        return "late"

    def weird() -> object:
        """Returns something that is not JSON."""
        return object()

    slow_tool = Tool.from_function(slow, timeout=0.05)
    results, sent = run_tools(
        rt, [boom, slow_tool, weird], call("boom"), call("slow"), call("weird"), call("nope")
    )
    errors = [r["error"] for r in results]
    assert errors[0] == "RuntimeError: kaput"
    assert errors[1] == "the tool 'slow' did not finish within 0.05 s"
    assert "not JSON-serialisable" in errors[2]
    assert "no tool named 'nope'" in errors[3] and "boom, slow, weird" in errors[3]
    assert len(sent) == 2, "the model was asked again after the failures"


# -- JSON-schema tools ----------------------------------------------------------------------------


def test_json_schema_tool_with_a_callable(rt):
    schema = {
        "type": "function",
        "function": {
            "name": "convert",
            "description": "Convert a temperature.",
            "parameters": {
                "type": "object",
                "properties": {"celsius": {"type": "number"}, "to": {"enum": ["F", "K"]}},
                "required": ["celsius", "to"],
            },
        },
    }

    def convert(celsius: float, to: str) -> float:
        return celsius * 9 / 5 + 32 if to == "F" else celsius + 273.15

    results, sent = run_tools(
        rt,
        [(schema, convert)],
        call("convert", celsius=100, to="F"),
        call("convert", celsius=1, to="X"),
    )
    assert results[0]["result"] == 212.0
    assert results[1]["error"].startswith("invalid arguments: $.to:")
    assert sent[0].tools[0].function.description == "Convert a temperature."
    with pytest.raises(InvalidInputError, match="needs the function"):
        Agent(rt, TestModel(), tools=[schema])


# -- REST tools -------------------------------------------------------------------------------------


@pytest.fixture
def rest_server():
    """An aiohttp server on loopback, in its own thread: a weather API behind a bearer token."""
    seen = []

    async def weather(request: web.Request) -> web.Response:
        seen.append(
            (
                request.method,
                request.path,
                dict(request.query),
                request.headers.get("Authorization"),
            )
        )
        if request.headers.get("Authorization") != "Bearer s3cret-token":
            return web.json_response({"error": "unauthorised"}, status=401)
        if request.match_info["city"] == "Atlantis":
            return web.json_response({"error": "no such city"}, status=404)
        return web.json_response(
            {"city": request.match_info["city"], "temp": 3, "units": request.query.get("units")}
        )

    async def notes(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.method, request.path, body, request.headers.get("X-Client")))
        return web.Response(text=f"saved {body['text']}")

    app = web.Application()
    app.router.add_get("/weather/{city}", weather)
    app.router.add_post("/notes", notes)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}", seen
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.run_until_complete(runner.cleanup())
    loop.close()


def test_rest_api_tools(rt, rest_server):
    base, seen = rest_server
    weather = Tool.rest_api(
        "weather",
        base + "/weather/{city}",
        description="Current weather.",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}, "units": {"enum": ["metric", "imperial"]}},
            "required": ["city"],
        },
        bearer_token="s3cret-token",
    )
    note = Tool.rest_api(
        "note",
        base + "/notes",
        method="POST",
        headers={"X-Client": "ferrule"},
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    )
    assert "s3cret" not in repr(weather)
    results, _ = run_tools(
        rt,
        [weather, note],
        call("weather", city="Oslo", units="metric"),
        call("weather", city="Atlantis"),
        call("note", text="buy milk"),
    )
    assert results[0]["result"] == {"city": "Oslo", "temp": 3, "units": "metric"}
    assert "HTTP 404" in results[1]["error"] and "s3cret" not in results[1]["error"]
    assert results[2]["result"] == "saved buy milk"
    assert seen[0] == ("GET", "/weather/Oslo", {"units": "metric"}, "Bearer s3cret-token")
    assert ("POST", "/notes", {"text": "buy milk"}, "ferrule") in seen


def test_rest_api_tool_connection_failure_is_an_error_result(rt):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = Tool.rest_api("down", f"http://127.0.0.1:{port}/x", bearer_token="tok-123456")
    results, _ = run_tools(rt, [down], call("down"))
    assert "failed" in results[0]["error"] and "tok-123456" not in results[0]["error"]


# -- presets: operator plugins ------------------------------------------------------------------------


def test_calculator_preset_calls_the_operator(rt):
    results, sent = run_tools(rt, ["calculator"], call("calculator", expression="2 * (3 + 4)"))
    assert results[0]["result"] == {"value": 14}
    assert sent[0].tools[0].function.name == "calculator"
    results, _ = run_tools(rt, ["calculator"], call("calculator", expression="2 +"))
    assert "error" in results[0]


def test_http_request_preset_reaches_only_public_addresses_unless_allowed(
    rt, rest_server, monkeypatch
):
    # The model chooses the URL: the preset is the operator, loopback refused by default.
    base, _ = rest_server
    monkeypatch.delenv("FERRULE_HTTP_REQUEST_ALLOW", raising=False)
    results, _ = run_tools(rt, ["http_request"], call("http_request", url=base + "/weather/Oslo"))
    assert "is a loopback address" in results[0]["error"]


def test_http_request_preset_calls_the_operator(rt, rest_server, monkeypatch):
    base, _ = rest_server
    monkeypatch.setenv("FERRULE_HTTP_REQUEST_ALLOW", "127.0.0.1")
    results, _ = run_tools(
        rt,
        ["http_request"],
        call(
            "http_request",
            url=base + "/weather/Oslo",
            headers={"Authorization": "Bearer s3cret-token"},
        ),
    )
    reply = results[0]["result"]
    assert reply["status"] == 200 and json.loads(reply["body"])["city"] == "Oslo"


def test_preset_schemas_match_their_operators(rt):
    operators = {o["name"]: o for o in rt.kernel.operators()}
    for name in ("calculator", "http_request"):
        preset = Agent(rt, TestModel(), tools=[name]).tools[0]
        assert set(preset.parameters["properties"]) <= set(
            operators[name]["input_schema"]["properties"]
        )


def test_operator_tool_reads_its_schema_from_the_runtime(rt):
    echo = Tool.from_operator("echo", runtime=rt)
    assert echo.parameters["properties"] == {"text": {"type": "string"}}
    results, _ = run_tools(rt, [echo], call("echo", text="hi"))
    assert results[0]["result"] == {"text": "hi"}
    with pytest.raises(InvalidInputError, match="parameters"):
        Tool.from_operator("echo")


# -- MCP servers ----------------------------------------------------------------------------------------

MCP_SERVER = textwrap.dedent(
    """
    import sys
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("test tools")

    @server.tool()
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

    @server.tool()
    def shout(text: str) -> str:
        \"\"\"Upper-case a text.\"\"\"
        return text.upper()

    @server.tool()
    def fail(reason: str) -> str:
        \"\"\"Always fails.\"\"\"
        raise ToolError(reason)

    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    """
)


@pytest.fixture(scope="module")
def mcp_script(tmp_path_factory):
    path = tmp_path_factory.mktemp("mcp") / "server.py"
    path.write_text(MCP_SERVER)
    return str(path)


def check_mcp_results(results):
    # MCPServer declares an output schema for these, so the results are structured
    assert results[0]["result"] == {"result": 5}
    assert results[1]["result"] == {"result": "HELLO"}
    assert "no luck" in results[2]["error"]


def test_mcp_server_over_stdio(rt, mcp_script):
    server = MCPServer.stdio(
        sys.executable, [mcp_script, "stdio"], prefix="m", errlog=open(os.devnull, "w")
    )
    results, sent = run_tools(
        rt,
        [server],
        call("m_add", a=2, b=3),
        call("m_shout", text="hello"),
        call("m_fail", reason="no luck"),
    )
    check_mcp_results(results)
    names = sorted(t.function.name for t in sent[0].tools)
    assert names == ["m_add", "m_fail", "m_shout"]
    add = next(t for t in sent[0].tools if t.function.name == "m_add")
    assert add.function.description == "Add two integers."
    assert set(add.function.parameters["properties"]) == {"a", "b"}
    assert server._client is None, "deleting the agent closed the connection"


def test_mcp_server_over_streamable_http(rt, mcp_script):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, mcp_script, "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, (
                    "the MCP server did not start"
                )
                time.sleep(0.1)
        server = MCPServer.http(f"http://127.0.0.1:{port}/mcp", include={"add", "shout", "fail"})
        results, _ = run_tools(
            rt,
            [server],
            call("add", a=2, b=3),
            call("shout", text="hello"),
            call("fail", reason="no luck"),
        )
        check_mcp_results(results)
    finally:
        process.terminate()
        process.wait(10)


def test_mcp_confirmation_and_failed_connection(rt, mcp_script):
    server = MCPServer.stdio(
        sys.executable,
        [mcp_script, "stdio"],
        requires_confirmation={"add"},
        errlog=open(os.devnull, "w"),
    )
    with Agent(
        rt, TestModel([{"tool_calls": [call("add", a=1, b=1)]}, "2"]), tools=[server]
    ) as agent:
        paused = agent.query("1+1").result()
        assert paused.is_paused and paused.requirements[0].tool_call.name == "add"
        assert agent.continue_run(paused.run_id, confirm=True).result().content == "2"
    broken = MCPServer.stdio(
        sys.executable, ["-c", "import sys; sys.exit(3)"], errlog=open(os.devnull, "w")
    )
    with Agent(rt, TestModel(["x"]), tools=[broken]) as agent:
        responses = list(agent.query("hi"))
    assert responses[-1].type == "error" and "could not connect" in responses[-1].content


def test_mcp_server_without_the_mcp_package_says_what_to_install():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from ferrule import MCPServer\n"
        "try:\n"
        "    MCPServer.stdio('python', ['server.py'])\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "pip install 'ferrule[mcp]'" in done.stdout


# -- a tool's own timeout, and no timeout (issue 31, item 11) ---------------------------------


def test_a_tools_own_timeout_error_is_that_tools_error(rt):
    async def fetch() -> str:
        """Fetch a page."""
        raise TimeoutError("the upstream server took too long")

    results, _ = run_tools(rt, [fetch], call("fetch"))
    assert results[0]["error"] == "TimeoutError: the upstream server took too long"


def test_no_tool_timeout_runs_tools_unbounded_and_reports_their_errors(rt):
    async def fetch() -> str:
        """Fetch a page."""
        raise TimeoutError("the upstream server took too long")

    async def pause() -> str:
        """Wait a little."""
        await asyncio.sleep(0.2)
        return "waited"

    results, _ = run_tools(rt, [fetch, pause], call("fetch"), call("pause"), tool_timeout=None)
    assert results[0]["error"] == "TimeoutError: the upstream server took too long"
    assert results[1]["result"] == "waited"


# -- decisions keyed by what the model cannot repeat (issue 31, item 3) -------------------------


def test_a_rejected_call_does_not_run_when_the_model_repeats_its_id(rt):
    wired: list[int] = []

    @tool(requires_confirmation=True)
    def wire_money(amount: int) -> str:
        """Wire money to the saved account."""
        wired.append(amount)
        return f"wired {amount}"

    calls = [
        {"name": "wire_money", "arguments": {"amount": 1000000}, "id": "dup"},
        {"name": "wire_money", "arguments": {"amount": 1}, "id": "dup"},
    ]
    with Agent(rt, TestModel([{"tool_calls": calls}, "Done."]), tools=[wire_money]) as agent:
        paused = agent.run("Pay the bills")
        big, small = paused.requirements
        assert (big.tool_call.arguments, small.tool_call.arguments) == (
            {"amount": 1000000},
            {"amount": 1},
        )
        assert big.tool_call.id != small.tool_call.id  # renamed before any decision
        big.reject("too much")
        small.confirm()
        output = agent.continue_run(paused.run_id, paused.requirements)
    assert wired == [1]
    assert output.status == "completed"
    results = {m.tool_call_id: m.content for m in output.messages if m.role == "tool"}
    assert results[small.tool_call.id] == "wired 1"
    assert "declined" in results[big.tool_call.id]
    # the model's turn as recorded carries the ids its results answer
    turn = next(m for m in output.messages if m.tool_calls)
    assert [c["id"] for c in turn.tool_calls] == [big.tool_call.id, small.tool_call.id]


def test_a_decision_by_a_repeated_id_covers_one_call_only(rt):
    @tool(requires_confirmation=True)
    def wire_money(amount: int) -> str:
        """Wire money to the saved account."""
        return f"wired {amount}"

    calls = [
        {"name": "wire_money", "arguments": {"amount": 5}, "id": "dup"},
        {"name": "wire_money", "arguments": {"amount": 6}, "id": "dup"},
    ]
    with Agent(rt, TestModel([{"tool_calls": calls}, "Done."]), tools=[wire_money]) as agent:
        paused = agent.run("Pay")
        renamed = paused.requirements[1].tool_call.id
        with pytest.raises(InvalidInputError, match=f"'{renamed}'"):
            agent.continue_run(paused.run_id, confirm={"dup": True})
        assert agent.continue_run(paused.run_id, confirm=False).status == "completed"
