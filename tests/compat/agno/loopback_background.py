"""Background responses for the replay's loopback model (`replay_agno.answer`), as OpenAI's
Responses API documents them: ``POST /responses`` with ``background: true`` answers the
response ``queued`` at once; ``GET /responses/{id}`` answers it ``in_progress`` the first
time, then ``completed`` with what the model answers the same request streamed
(`replay_agno.responses_answer`'s reply, its ``response.completed`` object); ``POST
/responses/{id}/cancel`` answers it ``cancelled`` (and so does every read after). Anything else is not a background
request: `background_answer` answers None and the caller answers it as before."""

from __future__ import annotations

import json
import re
import threading
import uuid
from typing import Any

import attrs
from ferrule_kit.testing.loopback import Reply

_RESPONSE = re.compile(r"/responses/(?P<id>[^/]+)(?P<cancel>/cancel)?$")


@attrs.define
class _Pending:
    """A background response: the request's streamed answer, and how often it was read."""

    final: dict[str, Any]
    polls: int = 0
    cancelled: bool = False


_pending: dict[str, _Pending] = {}
_lock = threading.Lock()


def _final_response(body: dict[str, Any]) -> dict[str, Any]:
    """The ``response.completed`` object of the model's streamed answer to ``body``."""
    import replay_agno  # beside this module; imported late, as it imports this one

    reply = replay_agno.responses_answer({**body, "stream": True})
    for action in reply.body:
        text = action.decode() if isinstance(action, bytes) else str(action)
        for line in text.splitlines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[len("data:") :])
            if event.get("type") in ("response.completed", "response.incomplete"):
                return dict(event["response"])
    raise AssertionError("the loopback model's streamed answer has no response.completed")


def _state(response: dict[str, Any], status: str) -> dict[str, Any]:
    shown = {**response, "status": status, "background": True, "error": None}
    if status in ("queued", "in_progress", "cancelled"):
        shown["output"] = []
    return shown


def background_answer(method: str, path: str, body: dict[str, Any]) -> Reply | None:
    """The reply to a background request (see the module docstring), else None."""
    if method == "POST" and path.endswith("/responses") and body.get("background"):
        response_id = f"resp_{uuid.uuid4().hex}"
        final = {**_final_response(body), "id": response_id}
        with _lock:
            _pending[response_id] = _Pending(final)
        return Reply.json(_state(final, "queued"))
    found = _RESPONSE.search(path)
    if found is None:
        return None
    with _lock:
        pending = _pending.get(found["id"])
        if pending is None:
            return Reply.json(
                {
                    "error": {
                        "message": f"No response with id '{found['id']}'.",
                        "type": "invalid_request_error",
                    }
                },
                status=404,
            )
        if found["cancel"] and method == "POST":
            pending.cancelled = True
        elif method != "GET":
            return None
        else:
            pending.polls += 1
        if pending.cancelled:
            return Reply.json(_state(pending.final, "cancelled"))
        if pending.polls == 1:
            return Reply.json(_state(pending.final, "in_progress"))
        return Reply.json(pending.final)
