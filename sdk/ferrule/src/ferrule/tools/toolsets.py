"""What users pass as tools, made `Tool`s: a tool, a function, a preset's name,
``(schema, function)``, a provider's own tool's declaration (`ProviderTool`), or a
`Toolset` that provides several (an MCP server)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ferrule_kernel import InvalidInputError

from .presets import PRESETS
from .provider_tools import provider_tool
from .tool import Tool

__all__ = ["Toolset", "as_tools"]


@runtime_checkable
class Toolset(Protocol):
    """Something that provides several tools, found when a run starts (an MCP server)."""

    async def list_tools(self) -> list[Tool]: ...

    async def aclose(self) -> None: ...


def as_tools(spec: Any) -> Tool | Toolset:
    """A `Tool` or `Toolset` from what users pass as a tool: a `Tool`, a function, a
    preset's name, a `Toolset`, or ``(schema, function)``."""
    if isinstance(spec, Tool) or isinstance(spec, Toolset):
        return spec
    if isinstance(spec, str):
        if spec not in PRESETS:
            raise InvalidInputError(
                f"unknown preset tool {spec!r}; presets: {', '.join(sorted(PRESETS))}",
                field="tools",
            )
        return PRESETS[spec]()
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], Mapping):
        return Tool.from_schema(spec[0], spec[1])
    if callable(spec):
        return Tool.from_function(spec)
    if isinstance(spec, Mapping):
        served = provider_tool(spec)
        if served is not None:
            return served
        raise InvalidInputError(
            "a JSON-schema tool needs the function to call: pass Tool.from_schema(schema, function) "
            "or (schema, function)",
            field="tools",
        )
    raise InvalidInputError(f"not a tool: {spec!r}", field="tools")
