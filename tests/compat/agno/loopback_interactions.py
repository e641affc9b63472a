"""The cookbook replay's answers on Gemini's Interactions API (``GeminiInteractions``).

`interactions_answer(method, path, body)` answers a request for ``/v1beta/interactions``
(None for any other path) as the API does, through one `ferrule_gemini.testing.
InteractionsServer` kept for the replay's whole run: each interaction is stored (unless
``store`` is false), a ``previous_interaction_id`` continues the conversation the server
kept (an unknown one is a 404), a malformed body is a 400 naming what is wrong, a streamed
request gets Google's events, and a ``background`` one (Deep Research) is ``in_progress``
to its first ``GET``, then done.

What the model says follows the replay's other providers: with function tools and no
function result in the new input, a call of the first tool with arguments made from its
schema; with a ``response_format``, JSON made from its schema; else one sentence. An
agent's reply starts with a thought summary when ``agent_config`` asks for them.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

from ferrule_gemini.testing import InteractionsServer, call_step, text_step, thought_step
from ferrule_kit.testing.loopback import Reply

SENTENCE = "Answered by the loopback model."


def _example(schema: Any) -> Any:
    """A value of ``schema``, made by the replay's own `example_of` (the replay runs as
    ``__main__``; imported by name elsewhere)."""
    example_of = getattr(sys.modules.get("__main__"), "example_of", None)
    if example_of is None:
        example_of = importlib.import_module("replay_agno").example_of
    return example_of(schema, {})


def _respond(conversation: list[dict[str, Any]], body: dict[str, Any]) -> list[dict[str, Any]]:
    new = body["input"] if isinstance(body["input"], list) else []
    answered = any(step.get("type") == "function_result" for step in new)
    tools = [t for t in body.get("tools") or () if t.get("type") == "function"]
    if tools and not answered:
        return [call_step(tools[0]["name"], _example(tools[0].get("parameters") or {}))]
    steps = []
    if (body.get("agent_config") or {}).get("thinking_summaries") == "auto":
        steps.append(thought_step("Planning the answer."))
    schema = (body.get("response_format") or {}).get("schema")
    steps.append(text_step(json.dumps(_example(schema)) if schema else SENTENCE))
    return steps


SERVER = InteractionsServer(_respond, background_polls=0)


def interactions_answer(method: str, path: str, body: dict[str, Any]) -> Reply | None:
    """The reply to a request for the Interactions API; None for any other path."""
    if "/interactions" not in path:
        return None
    return SERVER.reply(method, path, body) or Reply.json(
        {"error": {"code": 404, "message": f"no {method} {path}", "status": "NOT_FOUND"}},
        status=404,
    )
