"""The Qwen3 chat format, once, for every backend that runs Qwen3 (llama.cpp, exllamav2).

- `render_prompt` renders a conversation exactly as Qwen3's official chat template does
  when transformers applies it (``tojson`` is ``json.dumps(ensure_ascii=False)``):
  ChatML, the tools block in the system turn, ``<tool_call>`` re-rendering of earlier
  calls, tool results as ``<tool_response>`` in user turns, reasoning kept only for the
  assistant turns after the last real user query, and the empty think block that
  switches thinking off (``reasoning=False``, the template's ``enable_thinking=False``).
- `Qwen3StreamParser` splits the generated text, fed as it arrives, into reasoning,
  text and tool-call deltas of the language-model contract (`ferrule_kit.models.lm`).
- `SAMPLING` holds Qwen's recommended sampling per mode, `STOP_STRINGS` the end markers.

The mapping from `Message` to the template's input: ``content`` is the message's text
parts joined, with the text form of other parts (a document's text) set apart by blank
lines (`ferrule_kit.content.messages.message_text`; a part with no text form, such as an image,
raises `UnsupportedContentError`);
an assistant's ``reasoning_content`` is its reasoning parts joined — always given, so a
literal ``</think>`` in an assistant's text stays text; ``tool_calls`` carry the parsed
``arguments`` (a string is inserted verbatim, as the template does).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from ferrule_kit.content.messages import Message, message_text
from ferrule_kit.content.parts import TEXT
from ferrule_kit.content.policy import ContentPolicy
from ferrule_kit.errors import InvalidInputError

from .lm import ToolDescription, reasoning_delta, text_delta, tool_call_delta

__all__ = ["SAMPLING", "STOP_STRINGS", "Qwen3StreamParser", "render_prompt"]

#: Qwen's recommended sampling (QwenLM/Qwen3 quickstart), keyed by "reasoning on".
#: Thinking mode must not be greedy; presence_penalty (0-2) is left to the caller.
SAMPLING: dict[bool, dict[str, float | int]] = {
    True: {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "min_p": 0.0},
    False: {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0.0},
}

#: Qwen3's end-of-turn and end-of-text markers (generation_config eos ids 151645, 151643).
STOP_STRINGS: list[str] = ["<|im_end|>", "<|endoftext|>"]

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"

_TOOLS_HEADER = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_TOOLS_FOOTER = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
)


def _tojson(value: Any) -> str:
    # transformers' `tojson` filter: no HTML escaping, no key sorting, unicode kept.
    return json.dumps(value, ensure_ascii=False)


#: Qwen3 reads text: parts with a text form only.
CONTENT = ContentPolicy("qwen3", TEXT, label="Qwen3")


def _tool_json(tool: ToolDescription) -> str:
    function = tool.function
    return _tojson(
        {
            "type": tool.type,
            "function": {
                "name": function.name,
                "description": function.description,
                "parameters": function.parameters,
            },
        }
    )


def _is_tool_response(content: str) -> bool:
    return content.startswith("<tool_response>") and content.endswith("</tool_response>")


def render_prompt(
    messages: Sequence[Message],
    tools: Sequence[ToolDescription] = (),
    *,
    reasoning: bool = False,
    add_generation_prompt: bool = True,
) -> str:
    """Render ``messages`` (and ``tools``) as Qwen3's chat template does.

    ``reasoning`` is the template's ``enable_thinking``: off, the generation prompt ends
    with an empty think block, so the model answers without thinking.
    """
    if not messages:
        raise InvalidInputError("must not be empty", field="$.messages")
    contents = [message_text(m, f"$.messages[{i}]", CONTENT) for i, m in enumerate(messages)]
    out: list[str] = []
    first_is_system = messages[0].role == "system"
    if tools:
        out.append("<|im_start|>system\n")
        if first_is_system:
            out.append(contents[0] + "\n\n")
        out.append(_TOOLS_HEADER)
        for tool in tools:
            out.append("\n" + _tool_json(tool))
        out.append(_TOOLS_FOOTER)
    elif first_is_system:
        out.append("<|im_start|>system\n" + contents[0] + "<|im_end|>\n")

    # The last user turn that is a real query (not a tool response pasted as user text):
    # reasoning is rendered only for assistant turns after it.
    last_query = len(messages) - 1
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user" and not _is_tool_response(contents[index]):
            last_query = index
            break

    last = len(messages) - 1
    for index, message in enumerate(messages):
        role, content = message.role, contents[index]
        if role == "user" or (role == "system" and index > 0):
            out.append(f"<|im_start|>{role}\n{content}<|im_end|>\n")
        elif role == "assistant":
            thought = "".join(part.text for part in message.reasoning)
            if index > last_query and (index == last or thought):
                out.append(
                    "<|im_start|>assistant\n<think>\n"
                    + thought.strip("\n")
                    + "\n</think>\n\n"
                    + content.lstrip("\n")
                )
            else:
                out.append("<|im_start|>assistant\n" + content)
            for call_index, call in enumerate(message.tool_calls):
                if call_index > 0 or content:
                    out.append("\n")
                arguments = (
                    call.arguments if isinstance(call.arguments, str) else _tojson(call.arguments)
                )
                out.append(
                    f'<tool_call>\n{{"name": "{call.name}", "arguments": {arguments}}}\n</tool_call>'
                )
            out.append("<|im_end|>\n")
        elif role == "tool":
            if index == 0 or messages[index - 1].role != "tool":
                out.append("<|im_start|>user")
            out.append(f"\n<tool_response>\n{content}\n</tool_response>")
            if index == last or messages[index + 1].role != "tool":
                out.append("<|im_end|>\n")
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n")
        if not reasoning:
            out.append("<think>\n\n</think>\n\n")
    return "".join(out)


# -- parsing the model's output ---------------------------------------------------------

_START, _REASONING, _TEXT, _TOOL_CALL = range(4)
_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _held_back(data: str, tag: str) -> int:
    """Length of the longest suffix of ``data`` that may begin ``tag`` (split across tokens).

    Every tag holds one ``<``, at its start, so only the last ``<`` can begin it.
    """
    start = data.rfind("<", max(0, len(data) - len(tag) + 1))
    if start == -1 or not tag.startswith(data[start:]):
        return 0
    return len(data) - start


def _new_call_id() -> str:
    # Unique beyond this turn: histories move between providers, and some reject reused ids.
    return "call_" + uuid.uuid4().hex[:24]


class Qwen3StreamParser:
    """Splits Qwen3 output, fed chunk by chunk, into ``infer`` delta items.

    - Reasoning: with ``reasoning=True`` the output is reasoning up to ``</think>``; a
      leading ``<think>`` (what Qwen3 emits) is consumed, and its absence (a prompt that
      already opened the block) is handled the same way. With ``reasoning=False`` the
      prompt closed an empty think block, so all output is text (tags included).
    - Text: everything else, except ``<tool_call>…</tool_call>`` blocks.
    - Tool calls: each block is one tool call, emitted whole when it closes, with a new
      id ``call_<24 hex>`` and its ``arguments`` serialised as one JSON fragment.
      A block whose body is not a JSON object with a string ``"name"`` is emitted as an
      *invalid* tool call: best-effort name (or ``""``) and the raw block, tags included,
      as its arguments — never valid JSON — so `MessageAccumulator.tool_calls()` raises
      `InvalidToolCallError` naming it, with the model's text in its details.
      With ``call_lists=True`` a block may also hold a JSON list of such objects, one
      call each (SmolLM2 writes its calls so; ``[]`` is no call); a list with anything
      else in it is one invalid tool call, as above.
    - Newlines that only format the tags are dropped, as the template's re-rendering
      strips them: after ``<think>``, before ``</think>``, after ``</think>`` and
      ``</tool_call>``, and before ``<tool_call>``.
    - Tags split across chunks are recognised: only the shortest possible tag prefix is
      held back (plus a run of trailing newlines), so the result does not depend on how
      the output is chunked.
    - `close` flushes: held-back text goes out as what it was part of (an unfinished
      think block stays reasoning); an unterminated ``<tool_call>`` becomes a tool call
      if its body is already a complete call (the closing tag was cut off by a stop),
      otherwise an invalid tool call.
    """

    def __init__(self, reasoning: bool, *, call_lists: bool = False) -> None:
        self._mode = _START if reasoning else _TEXT
        self._call_lists = call_lists
        self._partial = ""  # a possible tag prefix (< 12 chars), or the START lookahead
        self._newlines = 0  # trailing newlines held until we know a tag does not follow
        self._strip_leading = True  # drop newlines at the start of a section
        self._call_body: list[str] = []
        self._calls = 0

    @property
    def saw_tool_calls(self) -> bool:
        return self._calls > 0

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Parse the next chunk; return the delta items it completes (maybe none)."""
        out: list[dict[str, Any]] = []
        data = self._partial + text if self._partial else text
        self._partial = ""
        while data:
            if self._mode == _START:
                data = data.lstrip("\n")
                if not data:
                    break
                if len(data) < len(THINK_OPEN) and THINK_OPEN.startswith(data):
                    self._partial = data
                    break
                if data.startswith(THINK_OPEN):
                    data = data[len(THINK_OPEN) :]
                self._mode = _REASONING
            elif self._mode == _TOOL_CALL:
                end = data.find(TOOL_CALL_CLOSE)
                if end == -1:
                    keep = _held_back(data, TOOL_CALL_CLOSE)
                    self._call_body.append(data[: len(data) - keep])
                    self._partial = data[len(data) - keep :]
                    break
                self._call_body.append(data[:end])
                out.extend(self._finish_block(closed=True))
                data = data[end + len(TOOL_CALL_CLOSE) :]
                self._enter(_TEXT)
            else:
                tag = THINK_CLOSE if self._mode == _REASONING else TOOL_CALL_OPEN
                end = data.find(tag)
                if end == -1:
                    keep = _held_back(data, tag)
                    self._emit(data[: len(data) - keep], out)
                    self._partial = data[len(data) - keep :]
                    break
                self._emit(data[:end], out)
                data = data[end + len(tag) :]
                self._enter(_TEXT if tag == THINK_CLOSE else _TOOL_CALL)
        return out

    def close(self) -> list[dict[str, Any]]:
        """Flush what is held back at the end of the output (see the class docstring)."""
        out: list[dict[str, Any]] = []
        partial, self._partial = self._partial, ""
        if self._mode == _TOOL_CALL:
            self._call_body.append(partial)
            out.extend(self._finish_block(closed=False))
            self._enter(_TEXT)
        else:
            if self._mode == _START:
                self._mode = _REASONING
            self._emit(partial, out)
            if self._newlines:
                self._delta("\n" * self._newlines, out)
                self._newlines = 0
        return out

    # -- internals

    def _enter(self, mode: int) -> None:
        self._mode = mode
        self._newlines = 0  # newlines before a tag format it
        self._strip_leading = True

    def _delta(self, text: str, out: list[dict[str, Any]]) -> None:
        out.append(reasoning_delta(text) if self._mode == _REASONING else text_delta(text))

    def _emit(self, segment: str, out: list[dict[str, Any]]) -> None:
        if self._strip_leading:
            segment = segment.lstrip("\n")
            if not segment:
                return
            self._strip_leading = False
        body = segment.rstrip("\n")
        if not body:
            self._newlines += len(segment)
            return
        self._delta("\n" * self._newlines + body, out)
        self._newlines = len(segment) - len(body)

    def _finish_block(self, *, closed: bool) -> list[dict[str, Any]]:
        body = "".join(self._call_body)
        self._call_body = []
        try:
            parsed = json.loads(body)
        except json.JSONDecodeError:
            parsed = None
        if _is_call(parsed):
            return [self._call(parsed)]
        if self._call_lists and isinstance(parsed, list) and all(map(_is_call, parsed)):
            return [self._call(call) for call in parsed]
        match = _NAME.search(body)
        name = ""
        if match:
            try:
                name = json.loads(f'"{match.group(1)}"')
            except json.JSONDecodeError:
                name = match.group(1)
        raw = TOOL_CALL_OPEN + body + (TOOL_CALL_CLOSE if closed else "")
        return [self._delta_of_call(name, raw)]

    def _call(self, call: dict[str, Any]) -> dict[str, Any]:
        return self._delta_of_call(
            call["name"], json.dumps(call.get("arguments", {}), ensure_ascii=False)
        )

    def _delta_of_call(self, name: str, arguments: str) -> dict[str, Any]:
        index, self._calls = self._calls, self._calls + 1
        return tool_call_delta(index, id=_new_call_id(), name=name, arguments=arguments)


def _is_call(value: Any) -> bool:
    """A JSON object with a string ``"name"``: what a tool-call block holds."""
    return isinstance(value, dict) and isinstance(value.get("name"), str)
