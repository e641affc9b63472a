"""A loopback Gemini Interactions API for tests: what a valid request looks like, checked
the way the API checks it, and a server that remembers interactions as Google's does.

`request_problems` lists everything wrong with a request (`body_problems`, its body alone): ``POST /v1beta/interactions``
(``model`` or ``agent``, never both; ``generation_config`` with a model, ``agent_config``
with an agent; typed input steps, each function result answering a call of the same
conversation; function tools; a JSON response format) or ``GET /v1beta/interactions/{id}``,
the key in ``x-goog-api-key`` and never in the URL. `validator` makes it a
`ferrule_kit.testing.loopback` validator.

`InteractionsServer` answers like the API: it stores each interaction (unless ``store`` is
false), continues one named by ``previous_interaction_id`` (404 for an unknown one, as
Google answers), streams a reply as Google's events (``interaction.created``,
``step.start`` / ``step.delta`` / ``step.stop``, ``interaction.completed``), and runs a
``background`` interaction that ``GET`` reads ``in_progress`` a few times before its end.
What the model says is the test's: ``respond(conversation, body)`` gets the whole
conversation so far (stored turns, then the new input) and returns the reply's steps
(`text_step`, `thought_step`, `call_step`).
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
from ferrule_kit.testing.loopback import RecordedRequest, Reply, sse

CREATE_PATH = "/v1beta/interactions"
GET_PATH = re.compile(r"^/v1beta/interactions/(?P<id>[A-Za-z0-9_-]+)$")
BODY_KEYS = frozenset(
    {
        "model",
        "agent",
        "input",
        "system_instruction",
        "tools",
        "generation_config",
        "agent_config",
        "response_format",
        "response_mime_type",
        "response_modalities",
        "previous_interaction_id",
        "store",
        "background",
        "stream",
        "service_tier",
        "environment",
    }
)
GENERATION_KEYS = frozenset(
    {
        "temperature",
        "top_p",
        "seed",
        "stop_sequences",
        "max_output_tokens",
        "thinking_level",
        "thinking_summaries",
        "tool_choice",
        "speech_config",
        "image_config",
    }
)
THINKING_LEVELS = frozenset({"minimal", "low", "medium", "high"})
CONTENT_TYPES = frozenset({"text", "image", "audio", "video", "document"})
STEP_TYPES = frozenset(
    {"user_input", "model_output", "thought", "function_call", "function_result"}
)
FAILED = {"code": 500, "message": "The agent could not finish the task.", "status": "INTERNAL"}
Respond = Callable[[list[dict[str, Any]], dict[str, Any]], list[dict[str, Any]]]


# -- steps -----------------------------------------------------------------------------


def text_step(text: str) -> dict[str, Any]:
    return {"type": "model_output", "content": [{"type": "text", "text": text}]}


def image_step(data: bytes, mime_type: str = "image/png", text: str = "") -> dict[str, Any]:
    """A reply that draws an image (``response_modalities``), after ``text`` if given."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    image = {"type": "image", "data": base64.b64encode(data).decode(), "mime_type": mime_type}
    return {"type": "model_output", "content": [*content, image]}


def thought_step(summary: str, signature: str | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {"type": "thought", "summary": [{"type": "text", "text": summary}]}
    if signature is not None:
        step["signature"] = signature
    return step


def call_step(name: str, arguments: dict[str, Any], signature: str | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {
        "type": "function_call",
        "id": f"fc_{uuid.uuid4().hex[:10]}",
        "name": name,
        "arguments": arguments,
    }
    if signature is not None:
        step["signature"] = signature
    return step


def error_body(code: int, status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


# -- requests --------------------------------------------------------------------------


def _content_problems(content: Any, where: str) -> list[str]:
    if not isinstance(content, list) or not content:
        return [f"{where}: a non-empty list of content items"]
    out = []
    for i, item in enumerate(content):
        at = f"{where}[{i}]"
        kind = item.get("type") if isinstance(item, dict) else None
        if kind not in CONTENT_TYPES:
            out.append(f"{at}.type: one of {sorted(CONTENT_TYPES)}")
        elif kind == "text" and not isinstance(item.get("text"), str):
            out.append(f"{at}.text: a string")
        elif kind != "text" and not (item.get("data") or item.get("uri")):
            out.append(f"{at}: data (base64) or uri")
        elif kind != "text" and not item.get("mime_type"):
            out.append(f"{at}.mime_type: required")
    return out


def _input_problems(steps: Any, calls: set[str]) -> list[str]:
    """``calls``: the ids of function calls the conversation already holds."""
    if isinstance(steps, str):
        return [] if steps else ["input: must not be empty"]
    if not isinstance(steps, list) or not steps:
        return ["input: a non-empty list of steps"]
    out = []
    for i, step in enumerate(steps):
        where = f"input[{i}]"
        kind = step.get("type") if isinstance(step, dict) else None
        if kind not in STEP_TYPES:
            out.append(f"{where}.type: one of {sorted(STEP_TYPES)}")
        elif kind in ("user_input", "model_output"):
            out += _content_problems(step.get("content"), f"{where}.content")
        elif kind == "function_call":
            if not step.get("id") or not step.get("name"):
                out.append(f"{where}: a function call needs id and name")
            if not isinstance(step.get("arguments"), dict):
                out.append(f"{where}.arguments: a JSON object")
            calls.add(str(step.get("id")))
        elif kind == "function_result":
            if step.get("call_id") not in calls:
                out.append(f"{where}.call_id: answers no function call of this conversation")
            if "result" not in step:
                out.append(f"{where}.result: required")
        elif kind == "thought" and not isinstance(step.get("signature"), str):
            out.append(f"{where}.signature: a thought sent back keeps its signature")
    return out


def _config_problems(body: dict[str, Any]) -> list[str]:
    out = []
    config = body.get("generation_config")
    if config is not None:
        if not isinstance(config, dict):
            return ["generation_config: an object"]
        out += [
            f"generation_config: unknown field {k!r}" for k in sorted(set(config) - GENERATION_KEYS)
        ]
        level = config.get("thinking_level")
        if level is not None and level not in THINKING_LEVELS:
            out.append(f"generation_config.thinking_level: one of {sorted(THINKING_LEVELS)}")
    tools = body.get("tools")
    if tools is not None:
        for i, tool in enumerate(tools if isinstance(tools, list) else [None]):
            if not isinstance(tool, dict) or tool.get("type") != "function":
                out.append(f"tools[{i}]: a function tool")
            elif not tool.get("name") or not isinstance(tool.get("parameters", {}), dict):
                out.append(f"tools[{i}]: name and a JSON-schema parameters object")
    fmt = body.get("response_format")
    if fmt is not None and not (
        isinstance(fmt, dict) and fmt.get("mime_type") == "application/json" and "schema" in fmt
    ):
        out.append("response_format: {type: text, mime_type: application/json, schema}")
    return out


def request_problems(
    method: str,
    path: str,
    query: Mapping[str, str],
    headers: Mapping[str, str],
    body: Any,
    calls: Iterable[str] = (),
) -> list[str]:
    """Everything the Interactions API would refuse in this request (empty when valid);
    ``calls``: the ids of function calls stored in the interaction it continues."""
    headers = {k.lower(): v for k, v in headers.items()}
    out = [] if headers.get("x-goog-api-key") else ["header x-goog-api-key: required"]
    if any(k.lower() == "key" for k in query):
        out.append("query: the key belongs in a header")
    if method == "GET":
        return out if GET_PATH.match(path) else [*out, f"GET {path}: not an interaction"]
    if method != "POST" or path != CREATE_PATH:
        return [*out, f"{method} {path}: expected POST {CREATE_PATH}"]
    return out + body_problems(body, calls)


def body_problems(body: Any, calls: Iterable[str] = ()) -> list[str]:
    """What the API would refuse in a ``POST /interactions`` body (``calls``: as in
    `request_problems`)."""
    if not isinstance(body, dict):
        return ["body: must be a JSON object"]
    out = [f"body: unknown field {k!r}" for k in sorted(set(body) - BODY_KEYS)]
    if ("model" in body) == ("agent" in body):
        out.append("body: exactly one of model and agent")
    if "agent" in body and "generation_config" in body:
        out.append("generation_config: the model path's (use agent_config with an agent)")
    if "model" in body and "agent_config" in body:
        out.append("agent_config: the agent path's")
    if body.get("background") and body.get("stream"):
        out.append("background: a background interaction is polled, not streamed")
    if body.get("store") is False and body.get("previous_interaction_id"):
        out.append("previous_interaction_id: needs stored interactions (store is false)")
    system = body.get("system_instruction")
    if system is not None and not isinstance(system, str):
        out.append("system_instruction: a string")
    out += _input_problems(body.get("input"), set(calls))
    return out + _config_problems(body)


def validator(record: RecordedRequest) -> list[str]:
    """`request_problems` as a `ferrule_kit.testing.loopback` validator (function results
    are checked against the request's own calls only: `InteractionsServer` checks them
    against the stored conversation too)."""
    try:
        body = record.json
    except ValueError as exc:
        return [f"body: not JSON ({exc})"]
    calls = _stored_call_ids(body) if isinstance(body, dict) else set()
    return request_problems(record.method, record.path, record.query, record.headers, body, calls)


def _stored_call_ids(body: dict[str, Any]) -> set[str]:
    # A stateless validator cannot see stored turns: a continued interaction may answer
    # any call, which `InteractionsServer` checks against what it stored.
    if not body.get("previous_interaction_id"):
        return set()
    steps = body.get("input")
    if not isinstance(steps, list):
        return set()
    return {str(s.get("call_id")) for s in steps if isinstance(s, dict)}


# -- replies ---------------------------------------------------------------------------


def interaction(
    interaction_id: str, status: str, steps: list[dict[str, Any]], body: Mapping[str, Any]
) -> dict[str, Any]:
    """An ``Interaction`` resource as the API returns it."""
    out: dict[str, Any] = {"id": interaction_id, "object": "interaction", "status": status}
    out.update((k, body[k]) for k in ("model", "agent") if k in body)
    if status != "in_progress":
        out["steps"] = steps
        thoughts = sum(3 for s in steps if s["type"] == "thought")
        out["usage"] = {
            "total_input_tokens": 11,
            "total_output_tokens": 2 * len(steps),
            "total_thought_tokens": thoughts,
            "total_tokens": 11 + 2 * len(steps) + thoughts,
        }
    return out


def _step_events(index: int, step: dict[str, Any]) -> list[dict[str, Any]]:
    kind = step["type"]
    start = {"event_type": "step.start", "index": index}
    deltas: list[dict[str, Any]] = []
    if kind == "model_output":
        start["step"] = {"type": kind}
        for item in step["content"]:
            if item["type"] != "text":
                deltas.append(item)  # media arrives whole
                continue
            text = item["text"]
            cut = len(text) // 2
            deltas += [{"type": "text", "text": p} for p in (text[:cut], text[cut:]) if p]
    elif kind == "thought":
        start["step"] = {"type": kind}
        deltas += [{"type": "thought_summary", "content": c} for c in step.get("summary", ())]
        if step.get("signature"):
            deltas.append({"type": "thought_signature", "signature": step["signature"]})
    elif kind == "function_call":
        start["step"] = {**step, "arguments": {}}
        arguments = json.dumps(step["arguments"])
        cut = len(arguments) // 2
        deltas += [
            {"type": "arguments_delta", "arguments": p} for p in (arguments[:cut], arguments[cut:])
        ]
    else:
        start["step"] = step
    events = [start, *({"event_type": "step.delta", "index": index, "delta": d} for d in deltas)]
    return [*events, {"event_type": "step.stop", "index": index}]


def stream_events(resource: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of a streamed interaction ending as ``resource`` does."""
    created = {k: v for k, v in resource.items() if k not in ("steps", "usage")}
    events: list[dict[str, Any]] = [
        {"event_type": "interaction.created", "interaction": {**created, "status": "in_progress"}}
    ]
    for index, step in enumerate(resource.get("steps", ())):
        events += _step_events(index, step)
    done = {k: v for k, v in resource.items() if k != "steps"}
    events.append({"event_type": "interaction.completed", "interaction": done})
    return events


def stream_reply(events: Iterable[Mapping[str, Any] | bytes]) -> Reply:
    """SSE of these events, each named by its ``event_type``, with an ``event_id``."""
    body = []
    for n, event in enumerate(events):
        if isinstance(event, Mapping):
            record = {**event, "event_id": f"evt_{n}"}
            body.append(sse(record, event=str(event.get("event_type", "message"))))
        else:
            body.append(event)
    return Reply.sse(body)


@attrs.define
class _Stored:
    conversation: list[dict[str, Any]]
    resource: dict[str, Any]
    polls_left: int = 0
    fails: bool = False


@attrs.define
class InteractionsServer:
    """Interactions as Google keeps them (see the module docstring). ``background_polls``:
    how many ``GET``s read a background interaction ``in_progress``; ``background_fails``:
    it ends ``failed`` rather than ``completed``. `reply` answers one request (None when it
    is not for the Interactions API); `__call__` makes it a scripted reply."""

    respond: Respond
    background_polls: int = 1
    background_fails: bool = False
    stored: dict[str, _Stored] = attrs.field(factory=dict)
    problems: list[str] = attrs.field(factory=list)

    def __call__(self, request: RecordedRequest) -> Reply:
        reply = self.reply(request.method, request.path, request.json if request.body else {})
        return reply or Reply.json(error_body(404, "NOT_FOUND", "no such path"), status=404)

    def reply(self, method: str, path: str, body: Any) -> Reply | None:
        match = GET_PATH.match(path)
        if method == "GET" and match:
            return self._get(match.group("id"))
        if method != "POST" or path != CREATE_PATH or not isinstance(body, dict):
            return None
        previous = body.get("previous_interaction_id")
        conversation: list[dict[str, Any]] = []
        if previous:
            if previous not in self.stored:
                return Reply.json(
                    error_body(404, "NOT_FOUND", f"Interaction {previous} not found"), status=404
                )
            conversation = list(self.stored[previous].conversation)
        calls = {s.get("id") for s in conversation if s.get("type") == "function_call"}
        problems = body_problems(body, {str(c) for c in calls})
        if problems:
            self.problems += problems
            return Reply.json(error_body(400, "INVALID_ARGUMENT", "; ".join(problems)), status=400)
        steps = body["input"]
        conversation += (
            [{"type": "user_input", "content": [{"type": "text", "text": steps}]}]
            if isinstance(steps, str)
            else steps
        )
        outputs = self.respond(conversation, body)
        interaction_id = f"v1_{uuid.uuid4().hex[:16]}"
        resource = interaction(interaction_id, "completed", outputs, body)
        if any(s["type"] == "function_call" for s in outputs):
            resource["status"] = "requires_action"
        stored = _Stored([*conversation, *outputs], resource)
        if body.get("store", True) is not False:
            self.stored[interaction_id] = stored
        if body.get("background"):
            stored.polls_left, stored.fails = self.background_polls, self.background_fails
            return Reply.json(interaction(interaction_id, "in_progress", [], body))
        if body.get("stream"):
            return stream_reply(stream_events(resource))
        return Reply.json(resource)

    def _get(self, interaction_id: str) -> Reply:
        stored = self.stored.get(interaction_id)
        if stored is None:
            return Reply.json(
                error_body(404, "NOT_FOUND", f"Interaction {interaction_id} not found"), status=404
            )
        if stored.polls_left > 0:
            stored.polls_left -= 1
            return Reply.json({**stored.resource, "status": "in_progress", "steps": []})
        if stored.fails:
            failed = {k: v for k, v in stored.resource.items() if k != "steps"}
            return Reply.json({**failed, "status": "failed", "error": FAILED})
        return Reply.json(stored.resource)
