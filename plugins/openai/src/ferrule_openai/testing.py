"""Replies in OpenAI's Responses wire for loopback servers in tests (this plugin's and
others' that drive `openai_responses_language_model`): `responses_reply` streams one turn
as the API does (typed events, each item added, its deltas, done, then
``response.completed``); `stream_events` frames events (and pauses, resets, raw bytes) as
a reply; `WIRE` is the wire as `ferrule_kit.testing.providers.ProviderConformance`
scripts it."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from ferrule_kit.testing.chat_completions import error_reply
from ferrule_kit.testing.loopback import Action, Pause, Reply, sse
from ferrule_kit.testing.providers import ProviderWire

_ids = itertools.count(1)


@attrs.frozen
class ResponsesCall:
    name: str
    arguments: dict[str, Any]
    call_id: str = attrs.field(factory=lambda: f"call_{next(_ids)}")


@attrs.frozen
class ResponsesReasoning:
    summary: str
    encrypted_content: str | None = None
    id: str = attrs.field(factory=lambda: f"rs_{next(_ids)}")
    #: How the summary streams (one delta per chunk); default: one delta.
    chunks: tuple[str, ...] = ()


def response_object(
    output: list[dict[str, Any]],
    *,
    status: str = "completed",
    usage: tuple[int, int, int] = (11, 7, 0),
    incomplete_reason: str | None = None,
) -> dict[str, Any]:
    input_tokens, output_tokens, reasoning_tokens = usage
    return {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "incomplete_details": None if incomplete_reason is None else {"reason": incomplete_reason},
        "output": output,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        },
    }


def responses_events(
    text: Sequence[str] = (),
    *,
    calls: Sequence[ResponsesCall] = (),
    reasoning: Sequence[ResponsesReasoning] = (),
    usage: tuple[int, int, int] = (11, 7, 0),
    status: str = "completed",
    incomplete_reason: str | None = None,
) -> list[dict[str, Any]]:
    """The events of one streamed turn: reasoning items, a message of ``text`` (its
    deltas), then function calls (arguments in two deltas)."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}
    ]
    output: list[dict[str, Any]] = []

    def item(index: int, done: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        added = {**done}
        for field in ("arguments", "encrypted_content"):
            added.pop(field, None)
        if done["type"] == "message":
            added["content"] = []
        if done["type"] == "reasoning":
            added["summary"] = []
        events.append({"type": "response.output_item.added", "output_index": index, "item": added})
        events.extend({**d, "output_index": index, "item_id": done["id"]} for d in deltas)
        events.append({"type": "response.output_item.done", "output_index": index, "item": done})
        output.append(done)

    for r in reasoning:
        done = {
            "type": "reasoning",
            "id": r.id,
            "summary": [{"type": "summary_text", "text": r.summary}],
        }
        if r.encrypted_content is not None:
            done["encrypted_content"] = r.encrypted_content
        item(
            len(output),
            done,
            [
                {"type": "response.reasoning_summary_text.delta", "summary_index": 0, "delta": d}
                for d in (r.chunks or (r.summary,))
            ],
        )
    if text:
        item(
            len(output),
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "".join(text), "annotations": []}],
            },
            [{"type": "response.output_text.delta", "content_index": 0, "delta": t} for t in text],
        )
    for c in calls:
        arguments = json.dumps(c.arguments)
        half = len(arguments) // 2
        item(
            len(output),
            {
                "type": "function_call",
                "id": f"fc_{c.call_id}",
                "call_id": c.call_id,
                "name": c.name,
                "arguments": arguments,
                "status": "completed",
            },
            [
                {"type": "response.function_call_arguments.delta", "delta": arguments[:half]},
                {"type": "response.function_call_arguments.delta", "delta": arguments[half:]},
            ],
        )
    final = "response.completed" if status == "completed" else "response.incomplete"
    events.append(
        {
            "type": final,
            "response": response_object(
                output, status=status, usage=usage, incomplete_reason=incomplete_reason
            ),
        }
    )
    return events


def stream_events(events: Iterable[Mapping[str, Any] | Action], *, delay: float = 0.0) -> Reply:
    """Typed events (each sent with its ``type`` as the SSE event name) as a streamed
    `Reply`, ``delay`` seconds between them; raw bytes, `Pause` and `Reset` pass through."""
    body: list[Action] = []
    for event in events:
        if body and delay:
            body.append(Pause(delay))
        body.append(sse(dict(event), event=event["type"]) if isinstance(event, Mapping) else event)
    return Reply.sse(body)


def responses_reply(
    text: Sequence[str] | str = (),
    *,
    calls: Sequence[ResponsesCall] = (),
    reasoning: Sequence[ResponsesReasoning] = (),
    usage: tuple[int, int, int] = (11, 7, 0),
) -> Reply:
    """One streamed turn as a loopback `Reply` (event name and ``type`` on each event)."""
    chunks = [text] if isinstance(text, str) else list(text)
    return stream_events(responses_events(chunks, calls=calls, reasoning=reasoning, usage=usage))


#: The Responses wire for `ferrule_kit.testing.providers.ProviderConformance`: the response
#: and its message item opened, a text delta a text, then the item done and the response
#: completed. Errors are OpenAI's error bodies, as Chat Completions has them.
WIRE = ProviderWire(
    pieces=lambda texts: responses_events(list(texts)),
    stream=stream_events,
    error=error_reply,
    not_json=b"event: response.output_text.delta\ndata: {not json\n\n",
    opening=2,
)


def background_response(
    status: str,
    text: Sequence[str] | str = (),
    *,
    error: Mapping[str, Any] | None = None,
    incomplete_reason: str | None = None,
    response_id: str = "resp_1",
) -> Reply:
    """A background response object as ``POST /responses`` (``queued``), ``GET
    /responses/{id}`` and ``POST /responses/{id}/cancel`` answer it: a ``completed`` (or
    ``incomplete``) one holds a turn of ``text``; a ``failed`` one the ``error`` given."""
    chunks = [text] if isinstance(text, str) else list(text)
    if status in ("completed", "incomplete"):
        final = responses_events(chunks, status=status, incomplete_reason=incomplete_reason)[-1]
        response = dict(final["response"])
    else:
        response = response_object([], status=status)
    response.update(id=response_id, background=True, error=dict(error) if error else None)
    return Reply.json(response)
