"""`TestModel`: the test model as a model spec for `ferrule.Agent`, like `LocalModel`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
from ferrule_kernel import Kernel
from ferrule_kit.models.lmspec import ModelRoute

from . import script
from .script import ScriptedToolCall, ScriptedTurn, converter

COMPONENT_TYPE = "test_language_model"


def _turn(value: Any) -> ScriptedTurn:
    if isinstance(value, ScriptedTurn):
        return value
    if isinstance(value, str):
        return ScriptedTurn(text=value)
    if isinstance(value, dict):
        from ferrule_kernel import structure_input

        return structure_input(value, ScriptedTurn, target="TestModel turn", conv=converter)
    raise TypeError(
        f"a scripted turn is a ScriptedTurn, a dict or a string, got {type(value).__name__}"
    )


def _function_target(function: str | Callable[..., Any] | None) -> str | None:
    if function is None or isinstance(function, str):
        return function
    if not callable(function):
        raise TypeError(
            f"function must be callable or a 'module:function' string, got {function!r}"
        )
    # The component takes JSON attributes, so a Python function is named by the id this
    # process's registry gives it (code to run: it never crosses `ferrule serve`).
    return script.register_function(function)


@attrs.frozen(init=False)
class TestModel:
    """A deterministic model for testing agents offline.

    ``TestModel(["Hello!", {"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}])``
    answers each request with the next scripted turn (a string is a text reply; a dict
    or `ScriptedTurn` may also carry reasoning, tool calls, a JSON ``output``, a finish
    reason, usage, chunking and a per-chunk delay). ``TestModel(function=f)`` answers with
    ``f(infer_input)`` (a turn, dict or string; ``f`` may be async, and may be a
    ``"module:function"`` string). ``TestModel()`` echoes the last user message.
    """

    __test__ = False

    turns: tuple[ScriptedTurn, ...]
    function: str | None
    chunk_size: int | None
    delay: float

    def __init__(
        self,
        turns: Sequence[ScriptedTurn | dict[str, Any] | str] = (),
        *,
        function: str | Callable[..., Any] | None = None,
        chunk_size: int | None = None,
        delay: float = 0.0,
    ) -> None:
        if isinstance(turns, (str, dict, ScriptedTurn)):
            turns = [turns]
        self.__attrs_init__(  # type: ignore[attr-defined]
            tuple(_turn(t) for t in turns), _function_target(function), chunk_size, delay
        )

    def attributes(self) -> dict[str, Any]:
        out: dict[str, Any] = {"delay": self.delay}
        if self.turns:
            out["turns"] = [converter.unstructure(t) for t in self.turns]
        if self.function is not None:
            out["function"] = self.function
        if self.chunk_size is not None:
            out["chunk_size"] = self.chunk_size
        return out

    def route(self, kernel: Kernel) -> ModelRoute:
        return ModelRoute(COMPONENT_TYPE, self.attributes())


__all__ = ["ScriptedToolCall", "ScriptedTurn", "TestModel"]
