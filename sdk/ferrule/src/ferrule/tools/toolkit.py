"""`Toolkit`: several tools under one name, Agno's way of grouping them (``from
ferrule.tools import Toolkit``); a `Toolset` an agent takes like any other.

    class Shop(Toolkit):
        def __init__(self) -> None:
            super().__init__(name="shop", tools=[self.price, self.stock])

        def price(self, item: str) -> float: ...
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .tool import Tool

__all__ = ["Toolkit"]


class Toolkit:
    """``tools``: functions (bound methods too) or `Tool`s. ``include_tools`` /
    ``exclude_tools`` pick among them by name; ``requires_confirmation_tools`` pause the run
    before each of their calls for a human's decision; ``stop_after_tool_call_tools`` end
    the run once they have run (their result the run's content) and ``show_result_tools``
    show their result in the content, as `tool`'s flags of those names. ``instructions``
    go into the agent's system message when ``add_instructions`` is true."""

    def __init__(
        self,
        name: str = "toolkit",
        tools: Sequence[Callable[..., Any] | Tool] = (),
        instructions: str | None = None,
        add_instructions: bool = False,
        include_tools: Collection[str] | None = None,
        exclude_tools: Collection[str] | None = None,
        requires_confirmation_tools: Collection[str] | None = None,
        stop_after_tool_call_tools: Collection[str] | None = None,
        show_result_tools: Collection[str] | None = None,
    ) -> None:
        self.name = name
        self.instructions = instructions
        self.add_instructions = add_instructions
        self.functions: dict[str, Tool] = {}
        self._include = set(include_tools) if include_tools is not None else None
        self._exclude = set(exclude_tools or ())
        self._confirm = set(requires_confirmation_tools or ())
        self._stop = set(stop_after_tool_call_tools or ())
        # Agno shows a stopping tool's result: the content is that result
        self._show = set(show_result_tools or ()) | self._stop
        for tool in tools:
            self.register(tool)
        known = set(self.functions)
        for field, names in (
            ("include_tools", self._include or set()),
            ("exclude_tools", self._exclude),
            ("requires_confirmation_tools", self._confirm),
            ("stop_after_tool_call_tools", self._stop),
            ("show_result_tools", self._show),
        ):
            unknown = sorted(names - known)
            if unknown:
                raise InvalidInputError(
                    f"names no tool of toolkit {name!r}: {', '.join(unknown)}; its tools: "
                    f"{', '.join(sorted(known))}",
                    field=field,
                )

    def register(self, function: Callable[..., Any] | Tool, name: str | None = None) -> None:
        """Add one tool (a function or a `Tool`), under ``name`` if given."""
        tool = function if isinstance(function, Tool) else Tool.from_function(function, name=name)
        if name is not None and tool.name != name:
            tool = attrs.evolve(tool, name=name)
        self.functions[tool.name] = self._flagged(tool.name, tool)

    @property
    def tools(self) -> list[Tool]:
        """The toolkit's tools after ``include_tools`` / ``exclude_tools`` (each with the
        flags the toolkit sets by name, as `functions` holds them)."""
        return [
            tool
            for name, tool in self.functions.items()
            if (self._include is None or name in self._include) and name not in self._exclude
        ]

    def _flagged(self, name: str, tool: Tool) -> Tool:
        if name not in self._confirm | self._stop | self._show:
            return tool
        return attrs.evolve(
            tool,
            requires_confirmation=tool.requires_confirmation or name in self._confirm,
            stop_after_tool_call=tool.stop_after_tool_call or name in self._stop,
            show_result=tool.show_result or name in self._show,
        )

    async def list_tools(self) -> list[Tool]:
        return self.tools

    async def aclose(self) -> None:
        """Nothing to release: a toolkit's tools are functions of this process."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, tools={sorted(self.functions)})"
