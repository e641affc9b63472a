"""The OpenAI Responses format's replies: ``infer`` items folded into a ``response``
object, step by step as its stream events (`ResponseBuilder`). Pure translation: no HTTP
here (`responses_api` serves it; `responses_wire` translates the request)."""

from __future__ import annotations

import copy
import time
import uuid
from typing import Any

from .openai_wire import OpenAIError
from .responses_wire import ResponsesRequest


def responses_usage(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    prompt, completion = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens") or 0},
        "total_tokens": prompt + completion,
    }


#: The output items whose content is one text part: the part they start with, the event
#: that ends its text and that event's other fields.
_TEXT_ITEMS: dict[str, tuple[dict[str, Any], str, dict[str, Any]]] = {
    "message": (
        {"type": "output_text", "text": "", "annotations": [], "logprobs": []},
        "response.output_text.done",
        {"logprobs": []},
    ),
    "reasoning": ({"type": "reasoning_text", "text": ""}, "response.reasoning_text.done", {}),
}

#: A ferrule error kind -> the ``code`` of a failed response's ``error``.
_FAILURE_CODES = {"rate_limited": "rate_limit_exceeded", "quota_exceeded": "rate_limit_exceeded"}


class ResponseBuilder:
    """Folds ``infer`` items into a Responses ``response`` object. `start`, `add`,
    `finish` and `fail` return the stream events each step makes (numbered in order), so
    that a stream and a plain reply are the same reply.

    Output items follow the model's stream: reasoning (one item per reasoning part: a
    signature ends one), then the message, then each function call; an item is done when
    the next one starts or the stream ends.
    """

    def __init__(self, request: ResponsesRequest, response_id: str | None = None) -> None:
        self.request = request
        self.id = response_id or f"resp_{uuid.uuid4().hex}"
        self.created_at = int(time.time())
        self.output: list[dict[str, Any]] = []
        self.status = "in_progress"
        self.usage: dict[str, Any] | None = None
        self.incomplete: str | None = None
        self.error: dict[str, Any] | None = None
        self._sequence = 0
        self._open: dict[str, Any] | None = None  # the output item being streamed
        self._call_index: int | None = None  # the LM contract's index of the open call

    def response(self) -> dict[str, Any]:
        """The response object as it stands."""
        done = self.status in ("completed", "incomplete")
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": self.status,
            "background": False,
            "completed_at": int(time.time()) if done else None,
            "error": self.error,
            "incomplete_details": {"reason": self.incomplete} if self.incomplete else None,
            "model": self.request.model,
            "output": copy.deepcopy(self.output),
            "previous_response_id": None,
            "store": False,
            "usage": responses_usage(self.usage),
            **copy.deepcopy(self.request.echo),
        }

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return event

    def _lifecycle(self, kind: str) -> dict[str, Any]:
        return self._event(kind, response=self.response())

    def start(self) -> list[dict[str, Any]]:
        return [self._lifecycle("response.created"), self._lifecycle("response.in_progress")]

    # -- output items --------------------------------------------------------------------

    def _begin(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        events = self._close()
        item["status"] = "in_progress"
        self.output.append(item)
        self._open = item
        index = len(self.output) - 1
        events.append(
            self._event("response.output_item.added", output_index=index, item=copy.deepcopy(item))
        )
        if item["type"] in _TEXT_ITEMS:
            part = copy.deepcopy(_TEXT_ITEMS[item["type"]][0])
            item["content"].append(part)
            events.append(
                self._event(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    part=copy.deepcopy(part),
                )
            )
        return events

    def _close(self, status: str = "completed") -> list[dict[str, Any]]:
        item, self._open, self._call_index = self._open, None, None
        if item is None:
            return []
        index = len(self.output) - 1
        ids = {"item_id": item["id"], "output_index": index}
        events = []
        if item["type"] == "function_call":
            events.append(
                self._event(
                    "response.function_call_arguments.done",
                    **ids,
                    name=item["name"],
                    arguments=item["arguments"],
                )
            )
        else:
            part = item["content"][0]
            _, done, extra = _TEXT_ITEMS[item["type"]]
            events.append(self._event(done, **ids, content_index=0, text=part["text"], **extra))
            events.append(
                self._event(
                    "response.content_part.done", **ids, content_index=0, part=copy.deepcopy(part)
                )
            )
        item["status"] = status
        events.append(
            self._event("response.output_item.done", output_index=index, item=copy.deepcopy(item))
        )
        return events

    def _kind(self) -> str | None:
        return self._open["type"] if self._open is not None else None

    def add(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """The events of one ``infer`` item."""
        events: list[dict[str, Any]] = []
        message = item["message"]
        for part in message.get("reasoning", ()):
            text, signature = part.get("text", ""), part.get("signature")
            if not text and signature is None:
                continue
            if self._kind() != "reasoning":
                reasoning = {
                    "id": f"rs_{uuid.uuid4().hex}",
                    "type": "reasoning",
                    "summary": [],
                    "content": [],
                }
                events += self._begin(reasoning)
            assert self._open is not None
            if text:
                self._open["content"][0]["text"] += text
                events.append(
                    self._event(
                        "response.reasoning_text.delta",
                        item_id=self._open["id"],
                        output_index=len(self.output) - 1,
                        content_index=0,
                        delta=text,
                    )
                )
            if signature is not None:  # a signature ends its reasoning part
                if self.request.encrypted_reasoning:
                    self._open["encrypted_content"] = signature
                events += self._close()
        text = "".join(p.get("text", "") for p in message.get("content", ()))
        if text:
            if self._kind() != "message":
                events += self._begin(
                    {
                        "id": f"msg_{uuid.uuid4().hex}",
                        "type": "message",
                        "role": "assistant",
                        "content": [],
                    }
                )
            assert self._open is not None
            self._open["content"][0]["text"] += text
            events.append(
                self._event(
                    "response.output_text.delta",
                    item_id=self._open["id"],
                    output_index=len(self.output) - 1,
                    content_index=0,
                    delta=text,
                    logprobs=[],
                )
            )
        for call in message.get("tool_calls", ()):
            index = call.get("index", 0)
            function = call.get("function", {})
            if self._kind() != "function_call" or self._call_index != index:
                events += self._begin(
                    {
                        "id": f"fc_{uuid.uuid4().hex}",
                        "type": "function_call",
                        "call_id": call.get("id") or f"call_{uuid.uuid4().hex}",
                        "name": function.get("name") or "",
                        "arguments": "",
                    }
                )
                self._call_index = index
            assert self._open is not None
            fragment = function.get("arguments", "")
            if fragment:
                self._open["arguments"] += fragment
                events.append(
                    self._event(
                        "response.function_call_arguments.delta",
                        item_id=self._open["id"],
                        output_index=len(self.output) - 1,
                        delta=fragment,
                    )
                )
        if item.get("usage") is not None:
            self.usage = item["usage"]
        reason = item.get("finish_reason")
        if reason in ("length", "content_filter"):
            self.incomplete = "max_output_tokens" if reason == "length" else "content_filter"
        return events

    def finish(self) -> list[dict[str, Any]]:
        """The events that end a stream that ended well."""
        events = self._close("incomplete" if self.incomplete else "completed")
        self.status = "incomplete" if self.incomplete else "completed"
        return [*events, self._lifecycle(f"response.{self.status}")]

    def fail(self, error: OpenAIError) -> list[dict[str, Any]]:
        """The event that ends a stream whose model failed after it started."""
        self.status = "failed"
        code = _FAILURE_CODES.get(error.code or "", "server_error")
        self.error = {"code": code, "message": error.message}
        return [self._lifecycle("response.failed")]
