"""Agno's cache of what a factory makes: ``Agent(tools=make_tools)`` and
``Agent(knowledge=make_knowledge)`` give functions called as a run starts (with ``agent``,
``session_state`` and ``run_context`` by name; they may be async). With the agent's
``cache_callables`` (True by default), what a factory makes is kept under a key and the
next run with that key reuses it instead of calling the factory again. The key is what
``callable_tools_cache_key`` (or ``callable_knowledge_cache_key``) returns (called with
``agent`` / ``run_context`` by name; it may be async), else the run's ``user_id``, else its
``session_id``; a None key is not cached, and neither is a knowledge factory's None.
`Agent.clear_callable_cache` forgets what was kept (``close=True`` also closes it: the
toolsets among the tools, an MCP server's connection, and the knowledge bases)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, Protocol

from ferrule_kernel import InvalidInputError, get_logger

from ..tools import Tool, Toolset, as_tools
from ..tools.tool_context import RunContext
from .inputs import call_by_name

log = get_logger("ferrule.agent")

CacheKind = Literal["tools", "knowledge"]

#: The setting naming each kind's key function.
KEY_SETTINGS: dict[CacheKind, str] = {
    "tools": "callable_tools_cache_key",
    "knowledge": "callable_knowledge_cache_key",
}


class CacheSettings(Protocol):
    """The agent's settings the cache reads, as they are at each run."""

    session_state: dict[str, Any]
    cache_callables: bool
    callable_tools_cache_key: Callable[..., Any] | None
    callable_knowledge_cache_key: Callable[..., Any] | None


def checked_tools(made: Any) -> list[Tool | Toolset]:
    """What a tool factory made, as tools (None: none)."""
    if made is not None and not isinstance(made, (list, tuple)):
        raise InvalidInputError(
            f"the tools function must return a list of tools, got {type(made).__name__}",
            field="tools",
        )
    return [as_tools(tool) for tool in made or ()]


class CallableCache:
    """What each key's factory call made, by kind (see the module docstring)."""

    def __init__(self) -> None:
        self.kept: dict[CacheKind, dict[str, Any]] = {"tools": {}, "knowledge": {}}

    async def key(
        self, kind: CacheKind, agent: CacheSettings, run_context: RunContext | None
    ) -> str | None:
        """The run's cache key for ``kind``: the agent's key function's, else the user's
        id, else the session's id (None: what the run's factory makes is not cached)."""
        field = KEY_SETTINGS[kind]
        make_key = getattr(agent, field)
        if make_key is not None:
            key = call_by_name(make_key, agent=agent, run_context=run_context)
            if inspect.isawaitable(key):
                key = await key
            if key is not None and not isinstance(key, str):
                raise InvalidInputError(
                    f"a cache key is a str or None, got {type(key).__name__}", field=field
                )
            return key
        if run_context is None:
            return None
        return run_context.user_id or run_context.session_id or None

    async def made(
        self,
        kind: CacheKind,
        factory: Callable[..., Any],
        agent: CacheSettings,
        run_context: RunContext | None,
        checked: Callable[[Any], Any],
    ) -> Any:
        """What ``factory`` makes for this run (called with ``agent``, ``session_state``
        (the run's, else the agent's) and ``run_context`` by name; it may be async), as
        ``checked`` returns it; or what it made for this run's key before."""
        key = await self.key(kind, agent, run_context) if agent.cache_callables else None
        kept = self.kept[kind]
        if key is not None and key in kept:
            log.debug("callable_cached", kind=kind, key=key)
            return kept[key]
        state = run_context.session_state if run_context is not None else None
        state = agent.session_state if state is None else state
        made = call_by_name(factory, agent=agent, session_state=state, run_context=run_context)
        if inspect.isawaitable(made):
            made = await made
        made = checked(made)
        if key is not None and made is not None:
            kept[key] = made
        return made

    async def made_tools(
        self, factory: Callable[..., Any], agent: CacheSettings, run_context: RunContext | None
    ) -> list[Tool | Toolset]:
        """The tools ``factory`` makes for this run, or made for its key before (`made`)."""
        tools: list[Tool | Toolset] = await self.made(
            "tools", factory, agent, run_context, checked_tools
        )
        return tools

    def cleared(self, kind: CacheKind | None) -> list[Any]:
        """Forget what was kept of ``kind`` (None: both), returning what is to be closed
        when asked (the toolsets among the tools, the knowledge bases), each once."""
        if kind not in (None, "tools", "knowledge"):
            raise InvalidInputError(
                f"kind is 'tools', 'knowledge' or None, got {kind!r}", field="kind"
            )
        closable: list[Any] = []
        for each in ("tools", "knowledge") if kind is None else (kind,):
            for made in self.kept[each].values():
                items = made if isinstance(made, list) else [made]
                closable += [
                    item
                    for item in items
                    if (each == "knowledge" or isinstance(item, Toolset))
                    and not any(item is seen for seen in closable)
                ]
            self.kept[each].clear()
        return closable
