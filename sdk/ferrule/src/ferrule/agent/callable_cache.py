"""Agno's cache of what a tool factory makes (``Agent(tools=make_tools)``): with the agent's
``cache_callables`` (True by default), the tools a factory makes are kept under a key and
the next run with that key reuses them instead of calling the factory again. The key is
what ``callable_tools_cache_key`` returns (called with ``agent`` / ``run_context`` by name;
it may be async), else the run's ``user_id``, else its ``session_id``; a None key is not
cached. `Agent.clear_callable_cache` forgets the kept tools (``close=True`` also closes the
toolsets among them, an MCP server's connection...).

Agno also caches a knowledge factory's knowledge (``callable_knowledge_cache_key``);
ferrule's ``knowledge`` is a knowledge base, never a factory, so only tools are cached."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, Protocol

from ferrule_kernel import InvalidInputError, get_logger

from ..tools import Tool, Toolset, as_tools
from ..tools.context import RunContext
from .inputs import call_by_name

log = get_logger("ferrule.agent")

CacheKind = Literal["tools", "knowledge"]


class CacheSettings(Protocol):
    """The agent's settings the cache reads, as they are at each run."""

    cache_callables: bool
    callable_tools_cache_key: Callable[..., Any] | None


class CallableCache:
    """The tools each key's factory call made (see the module docstring)."""

    def __init__(self) -> None:
        self.tools: dict[str, list[Tool | Toolset]] = {}

    async def key(self, agent: CacheSettings, run_context: RunContext | None) -> str | None:
        """The run's cache key: the agent's key function's, else the user's id, else the
        session's id (None: the run's tools are not cached)."""
        make_key = agent.callable_tools_cache_key
        if make_key is not None:
            key = call_by_name(make_key, agent=agent, run_context=run_context)
            if inspect.isawaitable(key):
                key = await key
            if key is not None and not isinstance(key, str):
                raise InvalidInputError(
                    f"a cache key is a str or None, got {type(key).__name__}",
                    field="callable_tools_cache_key",
                )
            return key
        if run_context is None:
            return None
        return run_context.user_id or run_context.session_id or None

    async def made_tools(
        self,
        factory: Callable[..., Any],
        agent: CacheSettings,
        session_state: dict[str, Any],
        run_context: RunContext | None,
    ) -> list[Tool | Toolset]:
        """The tools ``factory`` makes for this run (called with ``agent``,
        ``session_state`` and ``run_context`` by name; it may be async), or those it made
        for this run's key before."""
        key = await self.key(agent, run_context) if agent.cache_callables else None
        if key is not None and key in self.tools:
            log.debug("callable_tools_cached", key=key)
            return self.tools[key]
        made = call_by_name(
            factory, agent=agent, session_state=session_state, run_context=run_context
        )
        if inspect.isawaitable(made):
            made = await made
        if made is not None and not isinstance(made, (list, tuple)):
            raise InvalidInputError(
                f"the tools function must return a list of tools, got {type(made).__name__}",
                field="tools",
            )
        tools = [as_tools(tool) for tool in made or ()]
        if key is not None:
            self.tools[key] = tools
        return tools

    def cleared(self, kind: CacheKind | None) -> list[Toolset]:
        """Forget the kept tools (``kind`` None or "tools"; "knowledge" keeps nothing in
        ferrule), returning the toolsets among them (each once) for closing."""
        if kind not in (None, "tools", "knowledge"):
            raise InvalidInputError(
                f"kind is 'tools', 'knowledge' or None, got {kind!r}", field="kind"
            )
        if kind == "knowledge":
            return []
        toolsets: list[Toolset] = []
        for tools in self.tools.values():
            toolsets += [t for t in tools if isinstance(t, Toolset) and t not in toolsets]
        self.tools.clear()
        return toolsets
