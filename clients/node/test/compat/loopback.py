"""The Node compat tests' loopback server: the kit's LoopbackServer and its providers' wire
dialects (ferrule_kit.testing), driven by one JSON line per command on stdin, answered by
one JSON line on stdout, so the Node tests script the same replies the Python tests do.

Commands: ``{"op": "script", "replies": [...]}``, each reply ``{"dialect", "text"}``,
``{"dialect", "tool_calls": [{"id", "name", "arguments"}]}``, ``{"json": ..., "status"}`` or
``{"html": "..."}``;
``{"op": "auto"}`` makes it answer every later request by itself, as the Python replay of
Ailoy's files does (`answered`), for the replay of Ailoy's Node files;
``{"op": "check"}`` answers an error unless every request so far was well formed and
answered; ``{"op": "requests"}`` answers ``{"requests": [{"method", "path", "query", "headers", "body"}]}``
(``body`` as JSON when it is JSON, else as text); ``{"op": "clear"}`` forgets them."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ferrule_kit.content.messages import ToolCall
from ferrule_kit.content.parts import ANTHROPIC, GEMINI, OPENAI, OPENAI_COMPATIBLE
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer, RecordedRequest, Reply

DIALECTS = {"openai": OPENAI, "anthropic": ANTHROPIC, "gemini": GEMINI, "xai": OPENAI_COMPATIBLE}


def scripted(spec: dict[str, Any]) -> Reply:
    if "html" in spec:
        return Reply(spec.get("status", 200), {}, (spec["html"].encode(),), "text/html")
    if "json" in spec:
        return Reply.json(spec["json"], status=spec.get("status", 200), headers=spec.get("headers"))
    calls = tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in spec.get("tool_calls", ()))
    return reply(DIALECTS[spec["dialect"]], spec.get("text", "ok"), calls)


def answered() -> Callable[[RecordedRequest], Reply]:
    """The stand-in model of the Python replay of Ailoy's files (its replay_conftest.py,
    loaded by path: a module of that folder, never installed): it calls the offered tool that
    matches the user's words, answers a tool's result, and serves DuckDuckGo's results page."""
    path = Path(__file__).resolve().parents[4] / "tests/compat/ailoy/replay_conftest.py"
    spec = importlib.util.spec_from_file_location("ailoy_replay_conftest", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    answer: Callable[[RecordedRequest], Reply] = module.answer
    return answer


def recorded(request: RecordedRequest) -> dict[str, Any]:
    try:
        body: Any = request.json
    except ValueError:
        body = request.body.decode("utf-8", "replace")
    return {
        "method": request.method,
        "path": request.path,
        "query": dict(request.query),
        "headers": request.headers,
        "body": body,
    }


def main() -> None:
    with LoopbackServer() as server:
        print(json.dumps({"url": server.url}), flush=True)
        for line in sys.stdin:
            command = json.loads(line)
            if command["op"] == "script":
                server.script(*(scripted(spec) for spec in command["replies"]))
                answer: dict[str, Any] = {"ok": True}
            elif command["op"] == "auto":
                server.script(*[answered()] * 100_000)
                answer = {"ok": True}
            elif command["op"] == "check":
                try:
                    server.check()
                    answer = {"ok": True}
                except AssertionError as failed:
                    answer = {"error": str(failed)}
            elif command["op"] == "requests":
                answer = {"requests": [recorded(r) for r in server.requests]}
            elif command["op"] == "clear":
                server.requests.clear()
                answer = {"ok": True}
            else:
                answer = {"error": f"unknown op {command['op']!r}"}
            print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
