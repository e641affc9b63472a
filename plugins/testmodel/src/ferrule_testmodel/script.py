"""What a test model says: scripted turns, or a function that builds one per request.

These are the component's attributes, so they are JSON on the wire::

    rt.define("test_language_model", "lm0", {"turns": [
        {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
        {"text": "The sum is 3."},
    ]})
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, Union

import attrs
from ferrule_kernel import InvalidInputError, in_range, local_only, type_name
from ferrule_kit.content.messages import converter as wire_converter
from ferrule_kit.models.lm import FinishReason, Usage

#: Text, or the exact pieces to stream it in.
Pieces = Union[str, list[str]]  # noqa: UP007 (a runtime cattrs key)


def _structure_pieces(value: Any, _type: Any) -> Pieces:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError(f"expected a string or an array of strings, got {type_name(value)}")


#: The sdk's wire converter plus the `Pieces` union, for the attributes.
converter = wire_converter.copy()
converter.register_structure_hook(Pieces, _structure_pieces)


@attrs.frozen
class ScriptedToolCall:
    """A tool call the model makes: ``arguments`` is a JSON object (or a JSON string, sent as is)."""

    name: str
    arguments: Any = attrs.field(factory=dict)
    #: The call's id; ``call_<n>`` (counted per component) when not given.
    id: str | None = None


@attrs.frozen
class ScriptedTurn:
    """One reply of the model.

    ``text`` is streamed word by word (or in ``chunk_size``-character pieces; a list of
    strings is streamed as exactly those pieces), after
    ``reasoning`` (streamed only when the request asks for reasoning, as a real reasoning
    model does) and before ``tool_calls``. ``output`` is a JSON value sent as the reply's
    text (for structured output). ``error`` makes the stream fail with a `ModelError`
    after everything else was sent. ``finish_reason`` and ``usage`` override the
    computed ones; ``delay`` is seconds to wait before each streamed item.
    """

    text: Pieces = ""
    reasoning: Pieces = ""
    tool_calls: list[ScriptedToolCall] = attrs.field(factory=list)
    output: Any = None
    finish_reason: FinishReason | None = None
    usage: Usage | None = None
    chunk_size: int | None = attrs.field(default=None, validator=in_range(1))
    delay: float | None = attrs.field(default=None, validator=in_range(0))
    error: str | None = None


#: Python functions given to `TestModel`, by the id `register_function` gave each. They
#: live in this process: nothing a request sends can add one.
FUNCTIONS: dict[str, Callable[..., Any]] = {}


def register_function(function: Callable[..., Any]) -> str:
    """Keep ``function`` for test models of this process; the id names it in ``function``."""
    key = f"function-{secrets.token_hex(8)}"
    FUNCTIONS[key] = function
    return key


def _known_function(_instance: Any, _attribute: Any, value: str | None) -> None:
    if value is not None and value not in FUNCTIONS and ":" not in value:
        raise InvalidInputError(
            "is neither the id of a function registered in this process (register_function) "
            "nor a 'module:function'",
            field="function",
        )


@attrs.frozen
class TestModelAttributes:
    """Attributes of a ``test_language_model`` component.

    With ``turns``, each ``infer`` call answers with the next turn, in order (a request
    past the last one fails with a `ModelError`). With ``function``, each call answers with
    what the function returns for the `InferInput`: a `ScriptedTurn`, a dict of its fields,
    or a string (the text); it may be async. ``function`` is the id `register_function`
    gave a Python function, or a ``"module:function"`` to import; either is code to run, so
    it is accepted from code in this process only, never over `ferrule serve`. With
    neither, the model echoes the last user message (or the tool results it was sent).
    ``chunk_size`` and ``delay`` are defaults for every turn.
    """

    __test__ = False  # not a pytest test class, despite the name

    turns: list[ScriptedTurn] = attrs.field(factory=list)
    function: str | None = attrs.field(
        default=None, validator=[local_only("code to run"), _known_function]
    )
    chunk_size: int | None = attrs.field(default=None, validator=in_range(1))
    delay: float = attrs.field(default=0.0, validator=in_range(0))

    def __attrs_post_init__(self) -> None:
        if self.turns and self.function is not None:
            raise ValueError("give either turns or function, not both")
