"""`InferInput.tool_choice` for backends with no switch of their own: local models that
take a JSON schema (``output_schema``: a llama.cpp grammar, a format enforcer).

Decorate the component's ``infer`` with `honour_tool_choice`:

- ``"none"``: the model sees no tools, so it cannot call one;
- ``"required"`` or a named tool: the reply is constrained to one call, the JSON object
  ``{"name": <a tool's name>, "arguments": <its parameters>}`` (`forced_call_schema`),
  and that text is turned back into a streamed tool call (`ForcedCallParser`), its
  arguments sent as they are generated; the finish reason is ``"tool_calls"``.

The tools stay in the prompt of a forced call, so the model knows what it is calling.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, TypeVar, cast

import attrs

from .lm import FinishReason, InferInput, finish, reasoning_delta, text_delta, tool_call_delta

__all__ = [
    "ForcedCallParser",
    "constrained_inputs",
    "forced_call_schema",
    "honour_tool_choice",
]

#: The start of a forced call's JSON, up to its arguments (grammars allow whitespace).
_HEADER = re.compile(r'\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*')


def forced_call_schema(inputs: InferInput) -> dict[str, Any] | None:
    """The JSON schema of the call ``inputs.tool_choice`` forces, else None."""
    choice = inputs.tool_choice
    if choice in ("auto", "none"):
        return None
    name = inputs.forced_tool
    calls = [
        {
            "type": "object",
            "properties": {
                "name": {"const": t.function.name},
                "arguments": t.function.parameters,
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in inputs.tools
        if name is None or t.function.name == name
    ]
    return calls[0] if len(calls) == 1 else {"anyOf": calls}


@attrs.define
class ForcedCallParser:
    """Turns the streamed text of a forced call (``{"name": ..., "arguments": {...}}``)
    into tool-call deltas: the call's id and name once the name is complete, then the
    arguments' JSON as it comes (the object's closing brace held back until more
    follows, since the last one closes the call, not its arguments)."""

    call_id: str = attrs.field(factory=lambda: f"call_{uuid.uuid4().hex[:24]}")
    name: str | None = None
    _buffer: str = ""
    _arguments_started: bool = False

    def feed(self, text: str) -> list[dict[str, Any]]:
        self._buffer += text
        items = []
        if self.name is None:
            header = _HEADER.match(self._buffer)
            if header is None:
                return []
            self.name = json.loads(header.group(1))
            self._buffer = self._buffer[header.end() :]
            items.append(tool_call_delta(0, id=self.call_id, name=self.name))
        if not self._arguments_started:  # the whitespace a grammar allows before them
            self._buffer = self._buffer.lstrip()
            self._arguments_started = bool(self._buffer)
        cut = self._buffer.rfind("}")
        if cut > 0:
            items.append(tool_call_delta(0, arguments=self._buffer[:cut]))
            self._buffer = self._buffer[cut:]
        return items

    def end(self, complete: bool) -> list[dict[str, Any]]:
        """The rest: without the call's closing brace when the reply is ``complete``; a
        reply cut before its tool's name is text."""
        rest, self._buffer = self._buffer, ""
        if self.name is None:
            return [text_delta(rest)] if rest else []
        if complete:
            rest = rest.rstrip()
            rest = rest[:-1] if rest.endswith("}") else rest
        return [tool_call_delta(0, arguments=rest)] if rest else []


def constrained_inputs(inputs: InferInput) -> InferInput:
    """``inputs`` as `honour_tool_choice` hands them to the backend's own ``infer``: with
    ``"none"``, no tools; with a forced call, its schema as ``output_schema``. A backend's
    ``count_tokens`` renders these, so it counts the prompt ``infer`` reads."""
    if inputs.tool_choice == "none":
        return attrs.evolve(inputs, tools=[], tool_choice="auto")
    schema = forced_call_schema(inputs)
    if schema is None:
        return inputs
    return attrs.evolve(inputs, output_schema=schema, tool_choice="auto")


Infer = TypeVar("Infer", bound=Callable[..., AsyncIterator[dict[str, Any]]])
_Items = AsyncGenerator[dict[str, Any], None]  # what an async generator ``infer`` returns


def honour_tool_choice(infer: Infer) -> Infer:
    """Decorate a backend's ``infer(self, inputs)``, which honours ``output_schema``, so
    that it honours ``tool_choice`` too (see the module docstring)."""

    @functools.wraps(infer)
    async def wrapper(self: Any, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        forced = inputs.tool_choice not in ("auto", "none")
        constrained = constrained_inputs(inputs)
        if not forced:
            async with contextlib.aclosing(cast(_Items, infer(self, constrained))) as items:
                async for item in items:
                    yield item
            return
        parser = ForcedCallParser()
        # closed with this stream: a client that leaves stops the generation
        async with contextlib.aclosing(cast(_Items, infer(self, constrained))) as items:
            async for item in items:
                for out in _forced_call_items(item, parser):
                    yield out

    return wrapper  # type: ignore[return-value]


def _forced_call_items(item: dict[str, Any], parser: ForcedCallParser) -> list[dict[str, Any]]:
    """The items of a forced call for one item of the constrained reply."""
    message = item["message"]
    out = [
        reasoning_delta(part.get("text", ""), part.get("signature"))
        for part in message.get("reasoning", ())
    ]
    for call in message.get("tool_calls", ()):  # a backend that made the call itself
        function = call.get("function", {})
        parser.name = parser.name or function.get("name")
        out.append(
            tool_call_delta(
                call.get("index", 0),
                id=call.get("id"),
                name=function.get("name"),
                arguments=function.get("arguments", ""),
            )
        )
    text = "".join(p.get("text", "") for p in message.get("content", ()))
    if text:
        out += parser.feed(text)
    reason = item.get("finish_reason")
    if reason is not None:
        out += parser.end(complete=reason == "stop")
        if parser.name is not None and reason == "stop":
            reason = "tool_calls"
        last = finish(cast(FinishReason, reason))
        if item.get("usage") is not None:
            last["usage"] = item["usage"]
        out.append(last)
    return out
