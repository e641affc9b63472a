"""The ``test_language_model`` component: deterministic replies through the LM contract.

Tokens are whitespace-separated words, so usage, ``max_tokens`` and chunking are easy to
predict in a test: "The sum is 3." is 4 output tokens.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from ferrule_kernel.discovery import import_target
from ferrule_kit.content.messages import Message, TextPart
from ferrule_kit.errors import ModelError
from ferrule_kit.models.lm import (
    FinishReason,
    InferInput,
    ToolDescription,
    Usage,
    finish,
    reasoning_delta,
    text_delta,
    tool_call_delta,
)

from .script import (
    FUNCTIONS,
    Pieces,
    ScriptedToolCall,
    ScriptedTurn,
    TestModelAttributes,
    converter,
)

_WORD = re.compile(r"\s*\S+\s*|\s+")
#: Tool-call arguments are streamed as JSON fragments of this many characters by default.
ARGUMENT_PIECE = 8


def count_tokens(text: str) -> int:
    """The test model's token count: whitespace-separated words."""
    return len(text.split())


def _first_words(text: str, n: int) -> str:
    """``text`` up to the end of its ``n``-th word (trailing whitespace dropped)."""
    if n <= 0:
        return ""
    end = 0
    for index, match in enumerate(re.finditer(r"\S+", text)):
        if index == n:
            break
        end = match.end()
    return text[:end]


def _pieces(text: str, size: int | None) -> Iterator[str]:
    if size is None:
        # word by word, each piece keeping the whitespace around it: joined, they are the text
        yield from _WORD.findall(text)
    else:
        for start in range(0, len(text), size):
            yield text[start : start + size]


def _joined(pieces: Pieces) -> str:
    return pieces if isinstance(pieces, str) else "".join(pieces)


def _stream_pieces(scripted: Pieces, text: str, size: int | None) -> Iterator[str]:
    """The scripted pieces when they were given and survive stop and max_tokens whole."""
    if isinstance(scripted, list) and "".join(scripted) == text:
        return iter([p for p in scripted if p])
    return _pieces(text, size)


def _message_tokens(message: Message) -> int:
    count = sum(count_tokens(p.text) for p in message.contents if isinstance(p, TextPart))
    count += sum(count_tokens(p.text) for p in message.reasoning)
    for call in message.tool_calls:
        count += 1 + count_tokens(json.dumps(call.arguments))
    return count


def input_tokens(inputs: InferInput) -> int:
    """The test model's prompt count: the words of every message's text and reasoning, and
    for each tool call one token plus its arguments' JSON words (tools and settings are
    not counted)."""
    return sum(_message_tokens(m) for m in inputs.messages)


def _arguments_json(call: ScriptedToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments)


def example_instance(schema: dict[str, Any], text: str = "") -> Any:
    """A deterministic value that satisfies a (simple) JSON schema: strings are ``text``."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return example_instance(options[0], text)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for sub in schema["allOf"]:
            merged.update(sub)
        return example_instance(merged, text)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        return {
            name: example_instance(sub, text) for name, sub in schema.get("properties", {}).items()
        }
    if kind == "array":
        count = schema.get("minItems", 0)
        if "prefixItems" in schema:
            return [example_instance(s, text) for s in schema["prefixItems"]]
        return [example_instance(schema.get("items", {}), text) for _ in range(count)]
    if kind == "string":
        return text
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    return None


def _function(name: str | None) -> Callable[..., Any] | None:
    """The function ``name`` names: registered in this process, or imported. Validation let
    ``name`` through only from code in this process (it is code to run)."""
    if name is None:
        return None
    if name in FUNCTIONS:
        return FUNCTIONS[name]
    return import_target(name)


#: How many of the latest requests a test model keeps in ``requests``.
REQUESTS_KEPT = 1000


class TestLanguageModel:
    """A language model whose every reply is decided by its attributes (see `TestModelAttributes`)."""

    __test__ = False

    def __init__(self, attributes: TestModelAttributes) -> None:
        self.attributes = attributes
        self._function = _function(attributes.function)
        self._next_turn = 0
        self._next_call_id = 0
        #: The `InferInput`s received, in order (for tests that check what the agent sent);
        #: bounded, so a long-running `ferrule serve` on the test model does not grow.
        self.requests: deque[InferInput] = deque(maxlen=REQUESTS_KEPT)

    async def _turn(self, inputs: InferInput) -> ScriptedTurn:
        if self._function is not None:
            reply = self._function(inputs)
            if inspect.isawaitable(reply):
                reply = await reply
            return self._as_turn(reply)
        if self.attributes.turns:
            if self._next_turn >= len(self.attributes.turns):
                raise ModelError(
                    f"the test model's script has {len(self.attributes.turns)} turn(s) and all "
                    "were used; script more turns",
                    provider="test",
                )
            turn = self.attributes.turns[self._next_turn]
            self._next_turn += 1
            return turn
        return self._echo(inputs)

    def _as_turn(self, reply: Any) -> ScriptedTurn:
        if isinstance(reply, ScriptedTurn):
            return reply
        if isinstance(reply, str):
            return ScriptedTurn(text=reply)
        if isinstance(reply, dict):
            from ferrule_kernel import structure_input

            return structure_input(
                reply, ScriptedTurn, target="test model function reply", conv=converter
            )
        raise ModelError(
            f"the test model's function returned {type(reply).__name__}; expected a ScriptedTurn, "
            "a dict of its fields or a string",
            provider="test",
        )

    @staticmethod
    def _echo(inputs: InferInput) -> ScriptedTurn:
        last = inputs.messages[-1]
        if last.role == "tool":
            results = [m.text for m in inputs.messages[_trailing_tools(inputs.messages) :]]
            text = "Tool results: " + "; ".join(results)
        else:
            user = next((m for m in reversed(inputs.messages) if m.role == "user"), None)
            text = user.text if user is not None else ""
        if inputs.tool_choice not in ("auto", "none"):
            tool = _forced_tool(inputs)
            arguments = example_instance(tool.function.parameters, text)
            return ScriptedTurn(tool_calls=[ScriptedToolCall(tool.function.name, arguments)])
        if inputs.output_schema is not None:
            return ScriptedTurn(output=example_instance(inputs.output_schema, text))
        words = count_tokens(text)
        plural = "" if words == 1 else "s"
        return ScriptedTurn(
            text=text, reasoning=f"The user wrote {words} word{plural}; I repeat them."
        )

    async def count_tokens(self, inputs: InferInput) -> dict[str, int]:
        """`input_tokens`: what ``infer`` reports for ``inputs`` unless a scripted turn
        sets its own ``usage``. Neither recorded in `requests` nor a turn of the script."""
        return {"input_tokens": input_tokens(inputs)}

    async def infer(self, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        self.requests.append(inputs)
        turn = await self._turn(inputs)
        size = turn.chunk_size if turn.chunk_size is not None else self.attributes.chunk_size
        delay = turn.delay if turn.delay is not None else self.attributes.delay

        reasoning = _joined(turn.reasoning) if inputs.reasoning_on else ""
        text = json.dumps(turn.output) if turn.output is not None else _joined(turn.text)
        calls = list(turn.tool_calls)
        reason: FinishReason = "tool_calls" if calls else "stop"

        matched: str | None = None  # the stop string that ends the text earliest
        for stop in inputs.stop:
            at = text.find(stop)
            if at >= 0:
                text, calls, reason, matched = text[:at], [], "stop", stop

        budget = inputs.max_tokens
        if budget is not None:
            if count_tokens(reasoning) > budget:
                reasoning, text, calls, reason = _first_words(reasoning, budget), "", [], "length"
            elif count_tokens(reasoning) + count_tokens(text) > budget:
                text = _first_words(text, budget - count_tokens(reasoning))
                calls, reason = [], "length"
            elif (
                calls
                and count_tokens(reasoning)
                + count_tokens(text)
                + sum(count_tokens(_arguments_json(c)) for c in calls)
                > budget
            ):
                calls, reason = [], "length"

        output_tokens = count_tokens(reasoning) + count_tokens(text)
        output_tokens += sum(count_tokens(_arguments_json(c)) for c in calls)
        usage = turn.usage or Usage(
            input_tokens=input_tokens(inputs),
            output_tokens=output_tokens,
            reasoning_tokens=count_tokens(reasoning) if reasoning else None,
        )

        async def pace() -> None:
            if delay:
                await asyncio.sleep(delay)

        for piece in _stream_pieces(turn.reasoning, reasoning, size):
            await pace()
            yield reasoning_delta(piece)
        for piece in _stream_pieces(turn.text if turn.output is None else text, text, size):
            await pace()
            yield text_delta(piece)
        for index, call in enumerate(calls):
            call_id = call.id
            if call_id is None:
                self._next_call_id += 1
                call_id = f"call_{self._next_call_id}"
            arguments = _arguments_json(call)
            fragments = list(_pieces(arguments, size or ARGUMENT_PIECE)) or [""]
            await pace()
            yield tool_call_delta(index, id=call_id, name=call.name, arguments=fragments[0])
            for fragment in fragments[1:]:
                await pace()
                yield tool_call_delta(index, arguments=fragment)
        if turn.error is not None:
            raise ModelError(turn.error, provider="test")
        await pace()
        finish_reason = turn.finish_reason or reason
        yield finish(
            finish_reason, usage, stop_sequence=matched if finish_reason == "stop" else None
        )


def _forced_tool(inputs: InferInput) -> ToolDescription:
    """The tool a forced call calls: the named one; for ``"required"``, the first tool not
    called since the last user message, else the last tool (so an agent whose output is
    a tool, listed after its others, gets there)."""
    if inputs.forced_tool is not None:
        return next(t for t in inputs.tools if t.function.name == inputs.forced_tool)
    start = max((i for i, m in enumerate(inputs.messages) if m.role == "user"), default=0)
    called = {c.name for m in inputs.messages[start:] for c in m.tool_calls}
    return next((t for t in inputs.tools if t.function.name not in called), inputs.tools[-1])


def _trailing_tools(messages: list[Message]) -> int:
    """Index of the first of the tool messages that end ``messages``."""
    index = len(messages)
    while index > 0 and messages[index - 1].role == "tool":
        index -= 1
    return index
