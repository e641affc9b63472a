"""Agno's ``agno.tools.decorator``: `tool`, which makes a function a `Function` (``@tool`` or
``@tool(requires_confirmation=True, cache_results=True, ...)``); the decorated function can
still be called as itself.

It takes Agno's options (``name``, ``description``, ``strict``, ``instructions``,
``add_instructions``, ``show_result``, ``stop_after_tool_call``, ``requires_confirmation``,
``requires_user_input`` with ``user_input_fields``, ``external_execution``,
``external_execution_silent``, ``pre_hook``, ``post_hook``, ``tool_hooks``,
``cache_results``, ``cache_dir``, ``cache_ttl``) and ferrule's own (``timeout``: seconds a
call may take; ``retries``: how often it may ask the model to retry). Another keyword is a
`ValueError` naming the valid ones, as is asking for more than one of confirmation, user
input and external execution.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Collection
from typing import Any, ParamSpec, Protocol, TypedDict, TypeVar, overload

from ferrule_kernel import InvalidInputError

from .function import Function
from .function_schema import describe_function
from .tool_context import ToolContext

__all__ = ["ToolOptions", "tool"]

P = ParamSpec("P")
R = TypeVar("R")


class ToolOptions(TypedDict, total=False):
    """The options `tool` takes (for type checkers; `VALID_KWARGS` at run time)."""

    name: str | None
    description: str | None
    strict: bool | None
    instructions: str | None
    add_instructions: bool
    show_result: bool | None
    stop_after_tool_call: bool | None
    requires_confirmation: bool | None
    requires_user_input: bool | None
    user_input_fields: Collection[str] | None
    external_execution: bool | None
    external_execution_silent: bool | None
    pre_hook: Callable[..., Any] | None
    post_hook: Callable[..., Any] | None
    tool_hooks: list[Callable[..., Any]] | None
    cache_results: bool
    cache_dir: str | None
    cache_ttl: int
    timeout: float | None
    retries: int


class _FunctionDecorator(Protocol):
    """What ``tool(...)`` with options returns: a decorator that keeps the function's type."""

    def __call__(self, function: Callable[P, R], /) -> Function[P, R]: ...


#: The keywords `tool` takes: Agno's, then ferrule's own.
VALID_KWARGS = frozenset(
    {
        "name",
        "description",
        "strict",
        "instructions",
        "add_instructions",
        "show_result",
        "stop_after_tool_call",
        "requires_confirmation",
        "requires_user_input",
        "user_input_fields",
        "external_execution",
        "external_execution_silent",
        "pre_hook",
        "post_hook",
        "tool_hooks",
        "cache_results",
        "cache_dir",
        "cache_ttl",
        "timeout",
        "retries",
    }
)
_FLAGS = (
    "strict",
    "add_instructions",
    "show_result",
    "stop_after_tool_call",
    "requires_confirmation",
    "requires_user_input",
    "external_execution",
    "external_execution_silent",
    "cache_results",
)


def _checked(options: dict[str, Any]) -> dict[str, Any]:
    unknown = set(options) - VALID_KWARGS
    if unknown:
        raise ValueError(
            f"invalid tool configuration arguments: {sorted(unknown)}; valid arguments are: "
            f"{sorted(VALID_KWARGS)}"
        )
    exclusive = [
        f
        for f in ("requires_user_input", "requires_confirmation", "external_execution")
        if options.get(f)
    ]
    if len(exclusive) > 1:
        raise ValueError(
            "only one of requires_user_input, requires_confirmation and external_execution "
            f"may be set, got {', '.join(exclusive)}"
        )
    for flag in _FLAGS:
        value = options.get(flag)
        if value is not None and not isinstance(value, bool):
            raise InvalidInputError(
                f"{flag} must be True or False, got {type(value).__name__}", field=flag
            )
    if options.get("show_result") is None:
        # Agno shows a stopping tool's result: the run's content is that result
        options["show_result"] = bool(options.get("stop_after_tool_call"))
    return options


def _make(function: Callable[..., Any], options: dict[str, Any]) -> Function[..., Any]:
    fields = options.get("user_input_fields")
    if fields is not None and (
        isinstance(fields, str) or not all(isinstance(f, str) for f in fields)
    ):
        raise InvalidInputError(
            "user_input_fields must be a list of parameter names", field="user_input_fields"
        )
    name = options.pop("name", None) or getattr(function, "__name__", "tool")
    options = {k: v for k, v in options.items() if v is not None}
    if _takes_self(function):
        # a method of a Toolkit subclass: described without self, bound when registered
        summary, parameters, _ = describe_function(_without_self(function))
        options.setdefault("description", summary)
        made: Function[..., Any] = Function(
            name=name,
            entrypoint=function,
            parameters=parameters,
            skip_entrypoint_processing=True,
            handler=_unbound(name),
            **options,
        )
    else:
        made = Function(name=name, entrypoint=function, **options)
    unknown = sorted(set(fields or ()) - set(made.parameters.get("properties", {})))
    if unknown:
        raise InvalidInputError(
            f"user_input_fields names no parameter of {made.name}: {', '.join(unknown)}",
            field="user_input_fields",
        )
    return made


def _takes_self(function: Callable[..., Any]) -> bool:
    if inspect.ismethod(function):
        return False
    try:
        parameters = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return False
    return bool(parameters) and parameters[0] == "self"


def _without_self(function: Callable[..., Any]) -> Callable[..., Any]:
    """A stand-in with ``function``'s description less its ``self`` parameter."""
    signature = inspect.signature(function)

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{function.__name__} is a method: call it on its toolkit")

    stand_in.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:]
    )
    stand_in.__doc__ = function.__doc__
    stand_in.__name__ = function.__name__
    hints = typing.get_type_hints(function)
    stand_in.__annotations__ = {k: v for k, v in hints.items() if k != "self"}
    return stand_in


def _unbound(name: str) -> Any:
    async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
        raise InvalidInputError(
            f"tool {name!r} is a method: give the agent its toolkit, not the method",
            field="tools",
        )

    return handler


@overload
def tool(function: Callable[P, R], /) -> Function[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool | None = None,
    instructions: str | None = None,
    add_instructions: bool = True,
    show_result: bool | None = None,
    stop_after_tool_call: bool | None = None,
    requires_confirmation: bool | None = None,
    requires_user_input: bool | None = None,
    user_input_fields: Collection[str] | None = None,
    external_execution: bool | None = None,
    external_execution_silent: bool | None = None,
    pre_hook: Callable[..., Any] | None = None,
    post_hook: Callable[..., Any] | None = None,
    tool_hooks: list[Callable[..., Any]] | None = None,
    cache_results: bool = False,
    cache_dir: str | None = None,
    cache_ttl: int = 3600,
    timeout: float | None = None,
    retries: int = 1,
) -> _FunctionDecorator: ...
def tool(*args: Any, **kwargs: Any) -> Any:
    """``@tool`` or ``@tool(**options)`` (see the module docstring)."""
    if args and (len(args) > 1 or not callable(args[0]) or kwargs):
        raise ValueError("tool takes the function alone, or keyword options only")
    options = _checked(dict(kwargs))
    if args:
        return _make(args[0], options)

    def decorate(function: Callable[..., Any]) -> Function[..., Any]:
        return _make(function, dict(options))

    return decorate
