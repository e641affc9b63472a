"""The replay's loopback model, when a request carries a provider's own tools (Anthropic's
server tools, the Responses API's web search...): it answers as the provider would
(`builtin_tools_answer`), having run the tool on its side, so Agno's programs that give
an agent such a tool see its work come back and go on to the next turn.

- Anthropic ``/messages`` whose ``tools`` hold a server tool (a dated ``type`` with a
  ``name``) and whose last assistant turn used none: a ``server_tool_use`` of the first
  one (its input streamed), the ``*_tool_result`` block answering it, then text.
- Responses ``/responses`` whose ``tools`` hold a ``web_search`` kind: a finished
  ``web_search_call`` item, then a message.

None otherwise: the replay answers the request as ever.
"""

from __future__ import annotations

import re
from typing import Any

from ferrule_anthropic.testing import message_events, stream_reply
from ferrule_kit.testing.loopback import Reply
from ferrule_openai.testing import responses_events, stream_events

__all__ = ["builtin_tools_answer"]

SERVER_TOOL = re.compile(r"^([a-z_]+)_\d{8}$")
TEXT = "Answered by the loopback model, after its own tool ran."


def _anthropic_result(kind: str, use_id: str) -> dict[str, Any]:
    """The block Anthropic answers a server tool's use with, for the tool ``kind``."""
    if kind == "web_search":
        content: Any = [
            {
                "type": "web_search_result",
                "url": "https://example.com/loopback",
                "title": "A loopback page",
                "encrypted_content": "ZW5jcnlwdGVk",
            }
        ]
    elif kind == "code_execution":
        kind, content = (
            "bash_code_execution",
            {
                "type": "bash_code_execution_result",
                "stdout": "42\n",
                "stderr": "",
                "return_code": 0,
                "content": [],
            },
        )
    else:
        content = {"type": f"{kind}_result", "text": "Looked at by the loopback model."}
    return {"type": f"{kind}_tool_result", "tool_use_id": use_id, "content": content}


def _anthropic(body: dict[str, Any]) -> Reply | None:
    served = [t for t in body.get("tools") or [] if SERVER_TOOL.match(str(t.get("type")))]
    messages = body.get("messages") or []
    last = messages[-2] if len(messages) > 1 else {}
    used = any(
        isinstance(b, dict) and b.get("type") == "server_tool_use"
        for b in last.get("content") or ()
        if last.get("role") == "assistant"
    )
    if not served or used:
        return None
    tool = served[0]
    kind = SERVER_TOOL.match(tool["type"])[1]  # type: ignore[index]
    use_id = "srvtoolu_loopback"
    arguments = {"query": "loopback"} if kind.startswith("web") else {"command": "echo 42"}
    result = _anthropic_result(kind, use_id)
    events = message_events(server_tools=[(use_id, tool["name"], arguments, result)], text=[TEXT])
    return stream_reply(events)


def _responses(body: dict[str, Any]) -> Reply | None:
    searches = [t for t in body.get("tools") or [] if str(t.get("type")).startswith("web_search")]
    if not searches:
        return None
    call = {
        "type": "web_search_call",
        "id": "ws_loopback",
        "status": "completed",
        "action": {"type": "search", "query": "loopback"},
    }
    events = responses_events([TEXT])
    found = [
        {"type": "response.output_item.added", "output_index": 0, "item": call},
        {"type": "response.output_item.done", "output_index": 0, "item": call},
    ]
    return stream_events([events[0], *found, *events[1:]])


def builtin_tools_answer(path: str, body: dict[str, Any]) -> Reply | None:
    """The provider's reply to a request that carries its own tools; None when it carries
    none (see the module docstring)."""
    if path.endswith("/messages"):
        return _anthropic(body)
    if path.endswith("/responses"):
        return _responses(body)
    return None
