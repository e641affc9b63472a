"""`Toolkit`: several tools under one name, Agno's way of grouping them (``from
ferrule.tools import Toolkit``); a `Toolset` an agent takes like any other.

    class Shop(Toolkit):
        def __init__(self) -> None:
            super().__init__(name="shop", tools=[self.price, self.stock])

        def price(self, item: str) -> float: ...

Each tool becomes a `Function` (``functions``; an async one in ``async_functions``, which an
agent prefers, ferrule's runs being async). ``include_tools`` / ``exclude_tools`` pick among
them by name; ``requires_confirmation_tools`` pause the run before each of their calls for a
person's decision, ``external_execution_required_tools`` for the caller to run them;
``stop_after_tool_call_tools`` end the run once they have run (their result the run's
content) and ``show_result_tools`` show their result in the content. ``cache_results`` /
``cache_ttl`` / ``cache_dir`` cache each tool's results (`Function`'s), ``timeout`` bounds
each call (seconds). ``instructions`` go into the agent's system message when
``add_instructions`` is true. A toolkit whose class sets ``_requires_connect`` is connected
(`connect`) before its tools are first listed and closed (`close`) with the agent's tools.
A name in any of these lists that no tool has is refused, naming the list.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .function import Function
from .tool import Tool

__all__ = ["Toolkit", "ToolkitKey"]

#: What tells two toolkits apart when their tools are grouped: name, instructions, whether
#: they are added, and the names of their sync and async tools.
ToolkitKey = tuple[str, Any, bool, frozenset[str], frozenset[str]]


def _name_of(tool: Any) -> str:
    return str(tool.name if isinstance(tool, Tool) else getattr(tool, "__name__", ""))


class Toolkit:
    """Tools grouped under a name (see the module docstring)."""

    #: A toolkit holding a connection (a database, a session) sets this to True.
    _requires_connect: bool = False

    name: str
    tools: Sequence[Callable[..., Any] | Function]
    functions: dict[str, Function]
    async_functions: dict[str, Function]
    instructions: str | None
    add_instructions: bool
    include_tools: list[str] | None
    exclude_tools: list[str] | None
    requires_confirmation_tools: list[str]
    external_execution_required_tools: list[str]
    stop_after_tool_call_tools: list[str]
    show_result_tools: list[str]
    cache_results: bool
    cache_ttl: int
    cache_dir: str | None
    timeout: float | None

    def __init__(
        self,
        name: str = "toolkit",
        *,
        tools: Sequence[Callable[..., Any] | Function] | None = None,
        async_tools: Sequence[tuple[Callable[..., Any], str]] | None = None,
        instructions: str | None = None,
        add_instructions: bool = False,
        include_tools: list[str] | None = None,
        exclude_tools: list[str] | None = None,
        requires_confirmation_tools: list[str] | None = None,
        external_execution_required_tools: list[str] | None = None,
        stop_after_tool_call_tools: list[str] | None = None,
        show_result_tools: list[str] | None = None,
        cache_results: bool = False,
        cache_ttl: int = 3600,
        cache_dir: str | None = None,
        timeout: float | None = None,
        auto_register: bool = True,
    ) -> None:
        self.name = name
        self.tools = list(tools or ())
        self._async_tools = list(async_tools or ())
        self.functions = {}
        self.async_functions = {}
        self.instructions = instructions
        self.add_instructions = add_instructions
        self.include_tools = list(include_tools) if include_tools is not None else None
        self.exclude_tools = list(exclude_tools) if exclude_tools is not None else None
        self.requires_confirmation_tools = list(requires_confirmation_tools or ())
        self.external_execution_required_tools = list(external_execution_required_tools or ())
        self.stop_after_tool_call_tools = list(stop_after_tool_call_tools or ())
        self.show_result_tools = list(show_result_tools or ())
        self.cache_results = cache_results
        self.cache_ttl = cache_ttl
        self.cache_dir = cache_dir
        if timeout is not None or not hasattr(self, "timeout"):
            self.timeout = timeout
        self._connected = False
        known = {_name_of(t) for t in self.tools} | {n for _, n in self._async_tools}
        for field, names in (
            ("include_tools", self.include_tools or ()),
            ("exclude_tools", self.exclude_tools or ()),
            ("requires_confirmation_tools", self.requires_confirmation_tools),
            ("external_execution_required_tools", self.external_execution_required_tools),
            ("stop_after_tool_call_tools", self.stop_after_tool_call_tools),
            ("show_result_tools", self.show_result_tools),
        ):
            unknown = sorted(set(names) - known)
            if unknown:
                raise InvalidInputError(
                    f"names no tool of toolkit {name!r}: {', '.join(unknown)}; its tools: "
                    f"{', '.join(sorted(known))}",
                    field=field,
                )
        if auto_register:
            for tool in self.tools:
                self.register(tool)
            for function, tool_name in self._async_tools:
                self.register(function, name=tool_name)

    def register(self, function: Callable[..., Any] | Function, name: str | None = None) -> None:
        """Add one tool (a function, a `Function` or a `Tool`), under ``name`` if given; an
        async one goes to ``async_functions``."""
        tool_name = name or _name_of(function)
        if self.include_tools is not None and tool_name not in self.include_tools:
            return
        if self.exclude_tools is not None and tool_name in self.exclude_tools:
            return
        made = self._function(function, tool_name)
        entrypoint = made.entrypoint if made.entrypoint is not None else made.function
        if inspect.iscoroutinefunction(entrypoint) and made.entrypoint is not None:
            self.async_functions[tool_name] = made
        else:
            self.functions[tool_name] = made

    def _function(self, function: Callable[..., Any] | Tool, name: str) -> Function[..., Any]:
        stop = name in self.stop_after_tool_call_tools
        flags = {
            "requires_confirmation": name in self.requires_confirmation_tools,
            "external_execution": name in self.external_execution_required_tools,
            "stop_after_tool_call": stop,
            "show_result": name in self.show_result_tools or stop,
        }
        if isinstance(function, Function):
            entrypoint = function.entrypoint
            changes: dict[str, Any] = {"name": name, "owning_toolkit": self, "source_toolkit": self}
            if entrypoint is not None and _takes_self(entrypoint):
                # a method decorated with @tool in the class: bind it to this toolkit
                bound = entrypoint.__get__(self, type(self))
                rebuilt: Function[..., Any] = Function(
                    name=name, entrypoint=bound, description=function.description
                )
                changes.update(handler=rebuilt.handler, function=bound, entrypoint=bound)
            for flag, value in flags.items():
                changes[flag] = bool(getattr(function, flag)) or value
            if not function.cache_results and self.cache_results:
                changes.update(
                    cache_results=True, cache_ttl=self.cache_ttl, cache_dir=self.cache_dir
                )
            if function.timeout is None and self.timeout is not None:
                changes["timeout"] = self.timeout
            return attrs.evolve(function, **changes)
        if isinstance(function, Tool):
            made: Function[..., Any] = Function(
                name=name,
                description=function.description,
                parameters=function.parameters,
                skip_entrypoint_processing=True,
                handler=function.handler,
                timeout=function.timeout if function.timeout is not None else self.timeout,
                retries=function.retries,
                user_input_fields=function.user_input_fields,
                requires_user_input=function.requires_user_input,
                requires_confirmation=function.requires_confirmation
                or flags["requires_confirmation"],
                external_execution=function.external_execution or flags["external_execution"],
                stop_after_tool_call=function.stop_after_tool_call or flags["stop_after_tool_call"],
                show_result=function.show_result or flags["show_result"],
                cache_results=self.cache_results,
                cache_ttl=self.cache_ttl,
                cache_dir=self.cache_dir,
                owning_toolkit=self,
                source_toolkit=self,
            )
            return made
        return Function(
            name=name,
            entrypoint=function,
            cache_results=self.cache_results,
            cache_ttl=self.cache_ttl,
            cache_dir=self.cache_dir,
            timeout=self.timeout,
            owning_toolkit=self,
            source_toolkit=self,
            requires_confirmation=flags["requires_confirmation"],
            external_execution=flags["external_execution"],
            stop_after_tool_call=flags["stop_after_tool_call"],
            show_result=flags["show_result"],
        )

    def get_functions(self) -> dict[str, Function]:
        """The sync tools by name."""
        return self.functions

    def get_async_functions(self) -> dict[str, Function]:
        """Every tool by name, an async one preferred over a sync one of its name."""
        return {**self.functions, **self.async_functions}

    @property
    def requires_connect(self) -> bool:
        """Whether the toolkit holds a connection (`connect` before use, `close` after)."""
        return self._requires_connect

    def connect(self) -> None:
        """Open what the toolkit needs (a subclass that holds a connection says how)."""

    def close(self) -> None:
        """Release what `connect` opened."""

    # -- a Toolset, as the agent takes it ---------------------------------------------------

    async def list_tools(self) -> list[Tool]:
        if self.requires_connect and not self._connected:
            await asyncio.to_thread(self.connect)
            self._connected = True
        return list(self.get_async_functions().values())

    async def aclose(self) -> None:
        if self._connected:
            self._connected = False
            await asyncio.to_thread(self.close)

    def __repr__(self) -> str:
        names = sorted(self.get_async_functions())
        return f"{type(self).__name__}(name={self.name!r}, tools={names})"


def _takes_self(function: Callable[..., Any]) -> bool:
    if inspect.ismethod(function):
        return False
    try:
        parameters = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return False
    return bool(parameters) and parameters[0] == "self"
