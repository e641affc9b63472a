"""Agno's ``Agent.get_tools(run_response, run_context, session, user_id=None)`` /
``aget_tools(..., check_mcp_tools=True)``: the tools a run of the agent is given, as the
objects the agent holds (a `Toolkit` or an MCP server stays one; a function given as a tool
is its `Tool`), then those the run adds (the tool factory's, the run context's client
tools, the knowledge's search, the history and memory tools, the session state's update),
each a `Tool` (`Function` for Agno's). With ``check_mcp_tools`` (Agno's default) a toolset
whose tools cannot be listed (an MCP server that does not answer) is left out, with a
warning in the log; without it, it is kept as it is.

The Ailoy form, ``get_tools()`` without arguments, is the agent's tools as given
(`toolbox.AgentTools.get_tools`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ferrule_kernel import get_logger

from ..tools import Tool, Toolset
from ..tools.function import Function
from ..tools.tool_context import RunContext
from ..tools.toolkit import Toolkit

log = get_logger("ferrule.agent")

#: What `Agent.get_tools` returns: Agno's ``List[Union[Toolkit, Function, ...]]``.
RunTool = Toolkit | Function[..., Any] | Tool | Toolset


def run_context_for(
    run_response: Any, run_context: RunContext | None, session: Any, user_id: str | None
) -> RunContext:
    """The run context the tools are resolved for: the one given, else one for the run
    (``run_response``'s id), the session's id and ``user_id``."""
    if run_context is not None:
        return run_context
    run_id = getattr(run_response, "run_id", None) or ""
    session_id = getattr(session, "session_id", None) or getattr(run_response, "session_id", "")
    return RunContext(run_id=run_id, session_id=session_id or "", user_id=user_id)


class RunToolsSource(Protocol):
    """The agent's tools (`toolbox.AgentTools`) as `run_tools` reads them."""

    entries: list[Tool | Toolset]
    left_out: dict[int, list[Toolset]]
    resolve_run: Callable[[RunContext], Awaitable[dict[str, Tool]]] | None


async def run_tools(
    source: RunToolsSource, run_context: RunContext, check_toolsets: bool
) -> list[RunTool]:
    """The run's tools (see the module docstring): the agent's own entries, then what its
    resolution of the run's tools adds beyond them. A toolset that cannot list its tools is
    left out of both with ``check_toolsets``; without, it is kept as it is and only its
    tools are left out of the resolution."""
    assert source.resolve_run is not None
    kept: list[RunTool] = []
    named: set[str] = set()
    unlisted: list[Toolset] = []
    for entry in source.entries:
        if isinstance(entry, Tool):
            kept.append(entry)
            named.add(entry.name)
            continue
        try:
            named.update(tool.name for tool in await entry.list_tools())
        except Exception as exc:
            log.warning("toolset_unavailable", toolset=repr(entry), error=repr(exc))
            unlisted.append(entry)
            if check_toolsets:
                continue
        kept.append(entry)
    source.left_out[id(run_context)] = unlisted
    try:
        resolved = await source.resolve_run(run_context)
    finally:
        del source.left_out[id(run_context)]
    kept += [tool for name, tool in resolved.items() if name not in named]
    return kept
