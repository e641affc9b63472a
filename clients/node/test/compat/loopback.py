"""The Node compat tests' loopback server: the kit's LoopbackServer and its providers' wire
dialects (ferrule_kit.testing), driven by one JSON line per command on stdin, answered by
one JSON line on stdout, so the Node tests script the same replies the Python tests do.

Commands: ``{"op": "script", "replies": [...]}``, each reply ``{"dialect", "text"}``,
``{"dialect", "tool_calls": [{"id", "name", "arguments"}]}``, ``{"json": ..., "status"}`` or
``{"html": "..."}``;
``{"op": "auto"}`` makes it answer every later request by itself (`answered`: the
provider's wire by the request's path, a call of the ``calculator`` tool while one is offered
and no tool result came back yet, else a short text; Frankfurter's rates at ``/v1/latest``),
for the replay of Ailoy's own files;
``{"op": "requests"}`` answers ``{"requests": [{"method", "path", "query", "headers", "body"}]}``
(``body`` as JSON when it is JSON, else as text); ``{"op": "clear"}`` forgets them."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from ferrule_kit.messages import ToolCall
from ferrule_kit.parts import ANTHROPIC, GEMINI, OPENAI, OPENAI_COMPATIBLE
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


TOOL_RESULT_MARKS = (
    '"role": "tool"',
    '"tool_result"',
    '"functionResponse"',
    '"function_call_output"',
)


def answered(request: RecordedRequest) -> Reply:
    if request.path.endswith("/latest"):
        rates = {"KRW": 1380.5, "EUR": 0.92, "USD": 1.0}
        base = request.query.get("base", "USD")
        return Reply.json({"amount": 1.0, "base": base, "date": "2026-11-27", "rates": rates})
    if request.path.endswith("/messages"):
        dialect = ANTHROPIC
    elif ":streamGenerateContent" in request.path or ":generateContent" in request.path:
        dialect = GEMINI
    else:
        dialect = OPENAI
    sent = json.dumps(request.json)
    if '"calculator"' in sent and not any(mark in sent for mark in TOOL_RESULT_MARKS):
        formula = re.search(r"formula: ([^\\\"]+)", sent)
        expression = formula.group(1) if formula else "1+1"
        return reply(dialect, "", (ToolCall("call_1", "calculator", {"expression": expression}),))
    return reply(dialect, "Answered by the loopback server.")


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
                server.script(*[answered] * 100_000)
                answer = {"ok": True}
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
