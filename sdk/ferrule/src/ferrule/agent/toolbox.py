"""An agent's tools (`AgentTools`): the list it was given and what `Agent.add_tool`,
`remove_tools`, `add_tools_from_mcp_server`... change in it, the toolsets it closes on
`Agent.delete`, and `AgentTools.resolve`, each run's tools by name (with the tool
factory's, the knowledge's and the agentic state's)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, get_logger
from ferrule_kit.models.lm import FunctionDescription as ToolDescription

from .._bridge import Bridge, blocking, on_bridge_loop
from ..tools import Tool, Toolset, as_tools
from ..tools.presets import preset_tools
from ..tools.restapi import restapi_tool
from ..tools.tool_context import RunContext
from .callable_cache import CacheKind, CallableCache
from .inputs import update_session_state_tool
from .run_tools import RunTool, run_context_for, run_tools

log = get_logger("ferrule.agent")


class AgentTools:
    """The tools of an `Agent` (see the module docstring): ``tools`` as the agent was given
    them (a list, or Agno's function making each run's tools), on the agent's bridge."""

    #: The name its sync twins' errors give (they are `Agent`'s methods to users).
    shown_as = "Agent"

    def __init__(
        self,
        bridge: Callable[[], Bridge],
        tools: Any,
        resolve: Callable[[RunContext], Awaitable[dict[str, Tool]]] | None = None,
    ) -> None:
        self._bridge = bridge
        #: The agent's resolution of a run's tools (`Agent.get_tools` with Agno's arguments).
        self.resolve_run = resolve
        #: Toolsets `run_tools` leaves out of a run context's resolution, by the context's id.
        self.left_out: dict[int, list[Toolset]] = {}
        self.entries: list[Tool | Toolset] = []
        self.toolsets: list[Toolset] = []  # every toolset ever given: closed by `close`
        self.mcp_servers: dict[str, Toolset] = {}  # by add_tools_from_mcp_server's name
        #: Agno's tool factory: a function making each run's tools (see `resolve`).
        self.factory: Callable[..., Any] | None = None
        self.factory_cache = CallableCache()  # what the factory made, by key
        if tools is None or isinstance(tools, Sequence):
            self.set_tools(tools or [])
        elif callable(tools) and not isinstance(tools, (Tool, Toolset)):
            # a Tool is callable too (``await tool(...)``): one tool is not a factory
            self.factory = tools
        else:
            raise InvalidInputError(
                f"tools must be a list of tools or a function making them, got {type(tools).__name__}",
                field="tools",
            )

    @property
    def sync_bridge(self) -> Bridge:
        return self._bridge()

    def add_tool(self, tool: Any) -> None:
        """Add a tool: a `Tool`, a function, a preset's name, an MCP server, or (schema, function)."""
        resolved = as_tools(tool)
        self.entries.append(resolved)
        if isinstance(resolved, Toolset) and resolved not in self.toolsets:
            self.toolsets.append(resolved)

    def set_tools(self, tools: Sequence[Any]) -> None:
        """Replace every tool."""
        self.entries = []
        for tool in tools:
            self.add_tool(tool)

    def add_tools(self, tools: Sequence[Any]) -> None:
        """Add several tools (each as `add_tool` takes it)."""
        for tool in tools:
            self.add_tool(tool)

    def remove_tools(self, tool_names: Sequence[str]) -> None:
        """Remove the tools of these names (an MCP server's are removed with
        `remove_mcp_server`); Ailoy 0.2's argument names."""
        unknown = set(tool_names) - {t.name for t in self.entries if isinstance(t, Tool)}
        if unknown:
            raise InvalidInputError(
                f"no tool named {', '.join(sorted(map(repr, unknown)))}", field="tool_names"
            )
        self.entries = [
            t for t in self.entries if not (isinstance(t, Tool) and t.name in tool_names)
        ]

    def remove_tool(self, tool_name: str) -> None:
        """Remove the tool of this name (`remove_tools` of one)."""
        self.remove_tools([tool_name])

    def clear_tools(self) -> None:
        """Remove every tool (an MCP server stays connected until `delete`)."""
        self.entries = []

    @on_bridge_loop
    async def aget_tools(
        self,
        run_response: Any = None,
        run_context: RunContext | None = None,
        session: Any = None,
        user_id: str | None = None,
        check_mcp_tools: bool = True,
    ) -> list[RunTool]:
        """Without arguments, the agent's tools as given (Ailoy's, as `tools`); with Agno's
        (``run_response``, ``run_context``, ``session``, ``user_id``), the tools a run of
        the agent is given (`run_tools`: toolkits and MCP servers as they are, then the
        run's own; ``check_mcp_tools`` leaves out a toolset that cannot list its tools)."""
        if run_response is None and run_context is None and session is None and user_id is None:
            return list(self.entries)
        if self.resolve_run is None:
            raise TypeError("this agent resolves no run's tools")
        context = run_context_for(run_response, run_context, session, user_id)
        return await run_tools(self, context, check_mcp_tools)

    def get_tools(
        self,
        run_response: Any = None,
        run_context: RunContext | None = None,
        session: Any = None,
        user_id: str | None = None,
    ) -> list[RunTool]:
        """`aget_tools` for sync callers (see it): without arguments, the agent's tools as
        given (Ailoy's); with Agno's, a run's tools."""
        if run_response is None and run_context is None and session is None and user_id is None:
            return list(self.entries)
        return blocking(AgentTools.aget_tools)(self, run_response, run_context, session, user_id)

    def add_py_function_tool(self, f: Any, desc: Mapping[str, Any] | None = None) -> None:
        """Add a Python function as a tool: described by its signature and docstring, or
        by ``desc`` (``{"name", "description", "parameters"}``, checked)."""
        if desc is None:
            self.add_tool(Tool.from_function(f))
            return
        described = ToolDescription.model_validate(dict(desc))
        spec = {
            "name": described.name,
            "description": described.description,
            "parameters": described.parameters,
        }
        self.add_tool(Tool.from_schema(spec, f))

    def add_restapi_tool(self, tool_def: Mapping[str, Any], authenticator: Any = None) -> None:
        """Add a tool from Ailoy 0.1's REST API definition, its requests signed by
        ``authenticator`` (`ferrule.tools.restapi`)."""
        self.add_tool(restapi_tool(tool_def, authenticator))

    def add_tools_from_preset(self, preset_name: str, authenticator: Any = None) -> None:
        """Add a preset's tools by its name (`ferrule.tools.presets`)."""
        self.add_tools(preset_tools(preset_name, authenticator))

    @on_bridge_loop
    async def aadd_tools_from_mcp_server(
        self, name: str, params: Any, tools_to_add: Sequence[str] | None = None
    ) -> None:
        """Start an MCP server (``params``: mcp's ``StdioServerParameters``, or anything
        with ``command``, ``args``, ``env`` and ``cwd``) and add its tools, named
        ``{name}-{tool}`` (only ``tools_to_add`` when given)."""
        from ..mcp import MCPServer

        if name in self.mcp_servers:
            raise InvalidInputError(f"an MCP server named {name!r} is already added", field="name")
        server = MCPServer(
            params.command,
            list(getattr(params, "args", None) or ()),
            env=getattr(params, "env", None),
            cwd=None if getattr(params, "cwd", None) is None else str(params.cwd),
            include=tools_to_add,
        )
        self.toolsets.append(server)  # closed by delete, even if listing fails
        listed = await server.list_tools()
        self.mcp_servers[name] = server
        self.add_tools([attrs.evolve(t, name=f"{name}-{t.name}"[:64]) for t in listed])

    add_tools_from_mcp_server = blocking(aadd_tools_from_mcp_server)

    @on_bridge_loop
    async def aremove_mcp_server(self, name: str) -> None:
        """Remove an MCP server's tools and stop it."""
        server = self.mcp_servers.pop(name, None)
        if server is None:
            raise InvalidInputError(f"no MCP server named {name!r}", field="name")
        self.entries = [
            t for t in self.entries if not (isinstance(t, Tool) and t.name.startswith(f"{name}-"))
        ]
        self.toolsets.remove(server)
        await server.aclose()

    remove_mcp_server = blocking(aremove_mcp_server)

    @on_bridge_loop
    async def aclear_callable_cache(
        self, kind: CacheKind | None = None, close: bool = False
    ) -> None:
        """Forget what the tool and knowledge factories made and were kept by key (``kind``:
        "tools", "knowledge", or None for both); ``close``: also close it (the toolsets
        among the tools, an MCP server's connection; the knowledge bases), each once."""
        for made in self.factory_cache.cleared(kind):
            if close:
                await close_made(made)

    clear_callable_cache = blocking(aclear_callable_cache)

    async def resolve(
        self,
        agent: Any,
        run_context: RunContext | None,
        knowledge_tools: list[Tool | Toolset],
        agentic_state: bool,
    ) -> dict[str, Tool]:
        """A run's tools by name: the agent's, the factory's (`callable_cache`), the run
        context's ``client_tools``, the knowledge's, and the session state's with
        ``agentic_state``; toolsets listed. Two of one name are refused. The run context's
        ``tools`` are set to them."""
        skipped = self.left_out.get(id(run_context), ()) if run_context is not None else ()
        entries: list[Tool | Toolset] = [e for e in self.entries if e not in skipped]
        entries += knowledge_tools
        if self.factory is not None:
            entries += await self.factory_cache.made_tools(self.factory, agent, run_context)
        if run_context is not None:  # the caller's own for this run (Agno's client_tools)
            entries += [as_tools(tool) for tool in run_context.client_tools or ()]
        if agentic_state:
            entries.append(update_session_state_tool())
        found: dict[str, Tool] = {}
        for entry in entries:
            listed = await entry.list_tools() if isinstance(entry, Toolset) else [entry]
            for tool in listed:
                if tool.name in found:
                    raise InvalidInputError(
                        f"two tools are named {tool.name!r}; tool names must be unique (an MCP "
                        "server's prefix= can keep them apart)",
                        field="tools",
                    )
                found[tool.name] = tool
        if run_context is not None:
            run_context.tools = list(found.values())
        return found

    async def close(self) -> None:
        """Close every toolset ever given (an MCP server's connection...); a failure is logged."""
        for toolset in self.toolsets:
            try:
                await toolset.aclose()
            except Exception as exc:
                log.warning("toolset_close_failed", toolset=repr(toolset), error=repr(exc))


async def close_made(made: Any) -> None:
    """Close what a factory made: its ``aclose`` awaited, else its ``close`` (awaited when
    it is a coroutine); an object with neither is left as it is."""
    aclose, close = getattr(made, "aclose", None), getattr(made, "close", None)
    if callable(aclose):
        await aclose()
    elif callable(close):
        closed = close()
        if inspect.isawaitable(closed):
            await closed
