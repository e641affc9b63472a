"""Keep a request's text from becoming a chat template's control tokens.

A local backend renders a request into one prompt string (the chat template's markers
around the messages) and tokenizes it with special tokens parsed, so that the template's
``<|im_start|>`` is the control token the model was trained on. Parsed that way, the same
text typed by a user (or returned by a tool, or written by a model into its arguments)
would become that control token too, and could forge a system or assistant turn.

`ControlTextGuard` keeps the two apart. Before rendering, `ControlTextGuard.escape` puts a
marker in place of every control token's text in the request's messages and tools (a
random ASCII word the template copies as it is, even through JSON escaping); after
rendering, `ControlTextGuard.segments` cuts the prompt at those markers into the
template's text, to tokenize with special tokens parsed, and the user's control texts, to
tokenize as plain text. A request with no control text in it (nearly all) is left as it
is and its prompt is tokenized in one piece, exactly as before.

Which texts count is the tokenizer's business: those it would turn into a token only when
parsing special tokens (llama.cpp's control and unknown tokens; a Hugging Face tokenizer's
special added tokens). Tokens a tokenizer matches in any text (Qwen's ``<think>``) are
text to it, typed or not, and stay so.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable
from typing import TypeVar

import attrs

from .lm import InferInput

__all__ = ["ControlTextGuard", "Escapes", "Segment"]

T = TypeVar("T")


@attrs.frozen
class Segment:
    """A piece of a rendered prompt: ``special`` is True for the template's text (tokenize
    with special tokens parsed), False for a control token's text the request wrote
    (tokenize as plain text)."""

    text: str
    special: bool


@attrs.frozen
class Escapes:
    """The markers one request's control texts were replaced with: ``marker`` followed by
    the text's index in ``texts`` and a ``z``."""

    marker: str
    texts: tuple[str, ...]

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(re.escape(self.marker) + r"(\d+)z")


class ControlTextGuard:
    """The control texts of one tokenizer, and how to keep a request's copies of them text."""

    def __init__(self, texts: Iterable[str]) -> None:
        #: The texts, longest first (so a longer one that starts with a shorter one wins).
        self.texts = tuple(sorted({t for t in texts if t}, key=lambda t: (-len(t), t)))
        self._index = {text: i for i, text in enumerate(self.texts)}
        self._pattern = (
            re.compile("|".join(re.escape(t) for t in self.texts)) if self.texts else None
        )

    def escape(self, request: InferInput) -> tuple[InferInput, Escapes | None]:
        """``request`` with each control text in its messages and tools replaced by a
        marker, and the markers used; ``(request, None)`` when it holds none. Stop strings
        and the output schema are not part of the prompt and stay as they are."""
        pattern = self._pattern
        if pattern is None:
            return request, None
        marker = "ctl" + secrets.token_hex(12)
        found = False

        def replace(match: re.Match[str]) -> str:
            nonlocal found
            found = True
            return f"{marker}{self._index[match.group()]}z"

        def change(text: str) -> str:
            return pattern.sub(replace, text)

        messages = _map_strings(request.messages, change)
        tools = _map_strings(request.tools, change)
        if not found:
            return request, None
        escaped = attrs.evolve(request, messages=messages, tools=tools)
        return escaped, Escapes(marker, self.texts)

    @staticmethod
    def segments(prompt: str, escapes: Escapes | None) -> list[Segment]:
        """The rendered ``prompt`` cut at the markers ``escape`` put in: the template's text
        and the request's control texts, in order (the whole prompt as one template
        segment when nothing was escaped)."""
        if escapes is None:
            return [Segment(prompt, True)]
        out: list[Segment] = []
        start = 0
        for match in escapes.pattern.finditer(prompt):
            if match.start() > start:
                out.append(Segment(prompt[start : match.start()], True))
            out.append(Segment(escapes.texts[int(match.group(1))], False))
            start = match.end()
        if start < len(prompt):
            out.append(Segment(prompt[start:], True))
        return out


def _map_strings(value: T, change: Callable[[str], str]) -> T:
    """``value`` with ``change`` applied to every string in it (in lists, tuples, dict keys
    and values, and the fields of attrs instances); what holds no string is returned as it
    is, and so is every part that ``change`` leaves the same."""
    if isinstance(value, str):
        new = change(value)
        return value if new == value else new  # type: ignore[return-value]
    if isinstance(value, list | tuple):
        items = [_map_strings(v, change) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items)  # type: ignore[return-value]
    if isinstance(value, dict):
        pairs = [(_map_strings(k, change), _map_strings(v, change)) for k, v in value.items()]
        if all(k is a and v is b for (k, v), (a, b) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)  # type: ignore[return-value]
    if attrs.has(type(value)):
        changes = {}
        for field in attrs.fields(type(value)):  # type: ignore[arg-type]
            if not field.init:
                continue
            old = getattr(value, field.name)
            new = _map_strings(old, change)
            if new is not old:
                changes[field.alias] = new
        return attrs.evolve(value, **changes) if changes else value  # type: ignore[misc]
    return value
