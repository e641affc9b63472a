"""A provider's own tools, given as its declarations (Agno's ``tools=[{"type":
"code_execution_20250825", "name": "code_execution"}]``): `ProviderTool`, recognised by the
``type`` its provider documents for a tool it runs on its servers, and never run here.

Anthropic's server tools carry a dated type (``web_search_20250305``,
``code_execution_20250825``, ``advisor_20260301``...; `ANTHROPIC_SERVER_TOOLS`); the
Responses API's a plain one (``web_search_preview``, ``file_search``...;
`OPENAI_SERVER_TOOLS`). Tools their provider defines but the caller runs (Anthropic's
``bash`` or ``text_editor``, OpenAI's ``local_shell`` or ``computer_use_preview``) are not
among them: give the agent a ferrule tool for that work.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .tool import Tool
from .tool_context import ToolContext

__all__ = ["ANTHROPIC_SERVER_TOOLS", "OPENAI_SERVER_TOOLS", "ProviderTool", "provider_tool"]

#: Anthropic's tools that run on its servers, by type (the name, then the version's date).
ANTHROPIC_SERVER_TOOLS = re.compile(
    r"^(?:web_search|web_fetch|code_execution|advisor|tool_search_tool_regex|"
    r"tool_search_tool_bm25)_\d{8}$"
)
#: The Responses API's tools that run on OpenAI's servers, by type.
OPENAI_SERVER_TOOLS = frozenset(
    {
        "web_search",
        "web_search_2025_08_26",
        "web_search_preview",
        "web_search_preview_2025_03_11",
        "file_search",
        "code_interpreter",
        "image_generation",
        "mcp",
    }
)
#: The model routes (`ferrule.models.APIModel`'s provider plugin) that send each
#: provider's tools: Anthropic's Messages API, OpenAI's Responses API.
ROUTES = {"anthropic": frozenset({"anthropic"}), "openai": frozenset({"openai-responses"})}


def provider_tool(spec: Mapping[str, Any]) -> ProviderTool | None:
    """The provider tool ``spec`` declares, or None when its ``type`` names none."""
    kind = spec.get("type")
    if not isinstance(kind, str):
        return None
    if ANTHROPIC_SERVER_TOOLS.match(kind):
        provider = "anthropic"
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidInputError(
                f"Anthropic's {kind} tool needs its name (as Anthropic documents it)",
                field="tools.name",
            )
    elif kind in OPENAI_SERVER_TOOLS:
        provider, name = "openai", kind
    else:
        return None
    return ProviderTool(
        name=name,
        description=f"{provider}'s {kind} tool, run on its servers",
        parameters={"type": "object", "properties": {}},
        handler=_runs_elsewhere,
        declaration=dict(spec),
        provider=provider,
    )


async def _runs_elsewhere(arguments: dict[str, Any], context: ToolContext[Any]) -> Any:
    raise InvalidInputError(
        f"{context.tool_call.name} is a provider's own tool: its provider runs it, not ferrule",
        field="tools",
    )


@attrs.define(eq=False)
class ProviderTool(Tool):
    """A provider's own tool (see the module docstring): ``declaration`` is sent as given
    with each request to a model of ``provider`` (``"anthropic"``, ``"openai"``); a run
    whose model is another provider's is refused, naming the tool, rather than run
    without it."""

    declaration: dict[str, Any] = attrs.field(factory=dict, kw_only=True)
    provider: str = attrs.field(default="", kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        """The provider's declaration, as given."""
        return dict(self.declaration)


def check_provider_tools(model: object, tools: list[dict[str, Any]]) -> None:
    """Refuse ``tools`` (provider declarations) that ``model``'s provider does not run."""
    route = getattr(model, "route_provider", None) or getattr(model, "provider", None)
    for index, tool in enumerate(tools):
        found = provider_tool(tool)
        provider = found.provider if found is not None else "?"
        if route not in ROUTES.get(provider, ()):
            name = getattr(model, "id", model)
            raise InvalidInputError(
                f"{tool.get('type')!r} is {provider}'s own tool, run on its servers; model "
                f"{name!r} is not served by {provider}'s API that runs it",
                field=f"tools[{index}]",
            )
