"""Tools from MCP servers, over stdio (a subprocess) or streamable HTTP, through the ``mcp``
package (an extra: ``pip install 'ferrule[mcp]'``; imported when a server is first
connected).

    from ferrule.mcp import MCPServer

    files = MCPServer.stdio("python", ["my_server.py"])
    search = MCPServer.http("http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer ..."})
    agent = Agent(rt, model, tools=[files, search])

The connection opens when a run first lists the agent's tools and stays open (one
background task on the loop the agent's runs use) until the agent is deleted. Each MCP
tool becomes a `ferrule.tools.Tool`; a call the server reports as an error, or a broken
connection, is a `ToolError` result for the model.

`MCPClient` is Ailoy 0.2's spelling: a connection opened at once (``await
MCPClient.from_stdio(command, args)``) whose tools can also be called directly.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import attrs
from ferrule_kernel import get_logger

from .tools import Tool, ToolContext, ToolError

if TYPE_CHECKING:
    from ._bridge import LoopThread

__all__ = ["MCPClient", "MCPServer"]

log = get_logger("ferrule.mcp")


def _require_mcp() -> None:
    """MCP support is an extra of the sdk; say how to get it, at construction."""
    import importlib.util

    try:
        found = importlib.util.find_spec("mcp") is not None
    except ValueError:  # mcp is in sys.modules as None: it cannot be imported
        found = False
    if not found:
        raise ImportError(
            "MCP servers need the mcp package: pip install 'ferrule[mcp]'", name="mcp"
        )


def _errlog(errlog: TextIO | None) -> TextIO:
    """Where a stdio server's stderr goes: ``errlog``, else ``sys.stderr`` when it is a real
    file; a host that swapped ``sys.stderr`` for an in-memory stream (a notebook, pytest's
    capture) cannot hand that to a subprocess, so the process's own stderr is used."""
    if errlog is not None:
        return errlog
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return sys.__stderr__ or sys.stderr
    return sys.stderr


class MCPServer:
    """An MCP server whose tools an agent may call (a `ferrule.tools.Toolset`).

    ``requires_confirmation`` is True (every tool), False, or the names of the tools that
    pause a run for confirmation; ``include`` keeps only the named tools; ``prefix`` is
    put before each tool's name (``prefix_name``) to keep several servers' tools apart.
    """

    def __init__(
        self,
        command: str | None = None,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        errlog: TextIO | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        prefix: str | None = None,
        include: Collection[str] | None = None,
        requires_confirmation: bool | Collection[str] = False,
        timeout: float | None = None,
    ) -> None:
        _require_mcp()
        if (command is None) == (url is None):
            from ferrule_kernel import InvalidInputError

            raise InvalidInputError(
                "an MCP server needs exactly one of command or url", field="url"
            )
        self.command = command
        self.args = list(args)
        self.url = url
        self._env = dict(env) if env else None
        self._cwd = cwd
        self._errlog = errlog
        self._headers = dict(headers or {})  # may hold credentials: never shown
        self.prefix = prefix
        self.include = set(include) if include is not None else None
        self.requires_confirmation = requires_confirmation
        self.timeout = timeout
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._tools: list[Tool] | None = None
        self._lock: asyncio.Lock | None = None

    @classmethod
    def stdio(cls, command: str, args: Sequence[str] = (), **options: Any) -> MCPServer:
        """A server started as a subprocess, spoken to over its stdin and stdout."""
        return cls(command, args, **options)

    @classmethod
    def http(
        cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any
    ) -> MCPServer:
        """A server at a streamable-HTTP endpoint (``http://host:port/mcp``)."""
        return cls(url=url, headers=headers, **options)

    def __repr__(self) -> str:
        where = self.url if self.url is not None else " ".join([self.command or "", *self.args])
        return f"MCPServer({where!r})"

    # -- connection ------------------------------------------------------------------------

    def _transport(self) -> tuple[Any, Any]:
        """The mcp transport and the HTTP client it uses (to close), if any."""
        if self.url is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(
                headers=self._headers, timeout=httpx2.Timeout(30.0, read=300.0)
            )
            return streamable_http_client(self.url, http_client=http), http
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        assert self.command is not None  # a server without a url has a command
        parameters = StdioServerParameters(
            command=self.command, args=self.args, env=self._env, cwd=self._cwd
        )
        return stdio_client(parameters, errlog=_errlog(self._errlog)), None

    async def _serve(self, ready: asyncio.Future[None], closing: asyncio.Event) -> None:
        # The mcp client's task groups must be entered and left by one task: this one.
        from mcp import Client

        http = None
        try:
            transport, http = self._transport()
            async with Client(transport) as client:
                self._client = client
                ready.set_result(None)
                await closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(
                    ToolError(f"could not connect to {self!r}: {type(exc).__name__}: {exc}")
                )
            elif not isinstance(exc, asyncio.CancelledError):
                log.warning("mcp_connection_lost", server=repr(self), error=repr(exc))
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self._client = None
            if http is not None:
                await http.aclose()

    async def connect(self) -> None:
        """Open the connection now (otherwise done by the first `list_tools`)."""
        if self._client is not None:
            return
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._closing = asyncio.Event()
        self._task = loop.create_task(self._serve(ready, self._closing))
        await ready

    async def list_tools(self) -> list[Tool]:
        """The server's tools as `Tool` objects (listed once, on the first call)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._tools is None:
                await self.connect()
                listed = await self._client.list_tools()
                self._tools = [self._tool(t) for t in listed.tools if self._included(t.name)]
        return self._tools

    async def aclose(self) -> None:
        """Close the connection (and stop a stdio server's process)."""
        task, closing = self._task, self._closing
        self._task = self._closing = None
        self._tools = None
        if task is not None and closing is not None:
            closing.set()
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                task.cancel()
            except Exception as exc:  # the connection had already failed
                log.debug("mcp_close_failed", server=repr(self), error=repr(exc))

    # -- tools ----------------------------------------------------------------------------

    def _included(self, name: str) -> bool:
        return self.include is None or name in self.include

    def _confirm(self, name: str) -> bool:
        if isinstance(self.requires_confirmation, bool):
            return self.requires_confirmation
        return name in self.requires_confirmation

    def _tool(self, listed: Any) -> Tool:
        remote = listed.name
        name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{self.prefix}_{remote}" if self.prefix else remote)[
            :64
        ]

        async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
            client = self._client
            if client is None:
                raise ToolError(f"{self!r} is not connected")
            try:
                result = await client.call_tool(remote, arguments)
            except Exception as exc:
                raise ToolError(
                    f"{self!r} failed to run {remote!r}: {type(exc).__name__}: {exc}"
                ) from None
            if result.is_error:
                raise ToolError(_content_text(result.content) or f"{remote!r} failed")
            if result.structured_content is not None:
                return result.structured_content
            return _content_text(result.content)

        return Tool(
            name,
            listed.description or "",
            dict(listed.input_schema or {"type": "object", "properties": {}}),
            handler,
            self._confirm(remote),
            self.timeout,
        )


def _content_text(content: Sequence[Any]) -> str:
    """An MCP result's content blocks as text: text as is, other blocks named by type."""
    parts = []
    for block in content:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(block, 'type', 'content')}]")
    return "\n".join(parts)


class MCPClient:
    """A connection to one MCP server, its tools listed once it opens (Ailoy 0.2's
    ``MCPClient``)::

        client = await MCPClient.from_stdio("python", ["time_server.py"])
        now = client.get_tool("get_current_time")
        await now(timezone="Asia/Seoul")        # or now.call_sync(timezone=...)
        agent.add_tools(client.tools)
        await client.aclose()

    The connection lives on an event loop of its own, in a daemon thread, so its tools can
    be called from any loop, from an agent's run, or with `Tool.call_sync` inside a running
    loop. It is an `MCPServer` underneath: its options (``env``, ``cwd``, ``headers``,
    ``include``, ``prefix``, ``timeout``...) are accepted as keywords. ``aclose`` (or
    ``close``) ends it, and a stdio server's process.
    """

    def __init__(self, server: MCPServer, loop: LoopThread) -> None:
        self._server = server
        self._loop = loop
        self._tools: list[Tool] = []

    @classmethod
    async def from_stdio(cls, command: str, args: Sequence[str] = (), **options: Any) -> MCPClient:
        """Start ``command args`` and speak MCP over its stdin and stdout."""
        return await cls._open(MCPServer.stdio(command, args, **options))

    @classmethod
    async def from_streamable_http(cls, url: str, **options: Any) -> MCPClient:
        """Speak MCP to the streamable-HTTP endpoint ``url`` (``http://host:port/mcp``)."""
        return await cls._open(MCPServer.http(url, **options))

    @classmethod
    async def _open(cls, server: MCPServer) -> MCPClient:
        from ._bridge import LoopThread

        client = cls(server, LoopThread())
        try:
            listed = await client._loop.arun(server.list_tools())
        except BaseException:
            client._loop.stop()
            raise
        client._tools = [client._bridged(tool) for tool in listed]
        return client

    def _bridged(self, tool: Tool) -> Tool:
        """``tool``, its calls run on the connection's loop whatever loop awaits them."""
        inner = tool.handler

        async def on_connection_loop(arguments: dict[str, Any], context: ToolContext) -> Any:
            return await inner(arguments, context)

        async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
            return await self._loop.arun(on_connection_loop(arguments, context))

        return attrs.evolve(tool, handler=handler)

    @property
    def tools(self) -> list[Tool]:
        """The server's tools, as listed when the connection opened."""
        return list(self._tools)

    def get_tool(self, name: str) -> Tool | None:
        """The tool named ``name``, or None."""
        return next((tool for tool in self._tools if tool.name == name), None)

    async def aclose(self) -> None:
        """Close the connection (and stop a stdio server's process)."""
        if self._loop.started:
            await self._loop.arun(self._server.aclose())
        self._loop.stop()
        self._tools = []

    def close(self) -> None:
        """`aclose`, waited for (not from inside a running loop: use ``await aclose()``)."""
        if self._loop.started:
            self._loop.run(self._server.aclose())
        self._loop.stop()
        self._tools = []

    def __repr__(self) -> str:
        return f"MCPClient({self._server!r}, tools={[t.name for t in self._tools]!r})"
