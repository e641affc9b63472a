"""`ToolContext`: what a tool's handler may need besides its arguments, and the handler's
signature (`Handler`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import attrs
from ferrule_kit.content.messages import ToolCall

__all__ = ["DepsT", "Handler", "RunContext", "ToolContext"]

DepsT = TypeVar("DepsT")


@attrs.define(eq=False)
class RunContext:
    """Agno's ``RunContext``: who and what a run is for, given to the tools, instructions
    and tool factories that take a ``run_context`` parameter. ``session_state`` is the run's
    own state: what a tool changes in it is kept with the session. The run fills the rest:
    its ``output_schema`` (as given), its ``messages`` so far (Agno `Message`s, a copy made
    as each tool or hook is called), its ``tools`` (as resolved for the run) and the
    agent's ``knowledge``; ``client_tools``, given by the caller, are the run's tools too
    (after the agent's)."""

    run_id: str
    session_id: str
    user_id: str | None = None
    #: The caller's ``dependencies`` (``agent.run(..., dependencies=...)``).
    dependencies: dict[str, Any] | None = None
    knowledge_filters: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    session_state: dict[str, Any] | None = None
    output_schema: Any = None
    messages: list[Any] | None = None
    tools: list[Any] | None = None
    knowledge: Any = None
    client_tools: list[Any] | None = None


@attrs.frozen
class ToolContext(Generic[DepsT]):
    """What a handler may need besides its arguments: the runtime, the call itself, the
    session the run belongs to (``session_state`` is the run's state: what a tool changes
    in it is kept with the session), the caller's ``deps`` (``agent.run(..., deps=...)``)
    and ``retry``, how many times this tool asked the model to retry (`ModelRetry`) so far
    in the run.

    A function tool receives it when it has a parameter annotated ``ToolContext`` or
    ``ToolContext[Deps]`` (pydantic-ai's ``RunContext[Deps]``); that parameter is not part
    of the schema the model sees.
    """

    runtime: Any
    tool_call: ToolCall
    session_state: dict[str, Any] = attrs.field(factory=dict)
    session_id: str | None = None
    user_id: str | None = None
    deps: DepsT = attrs.field(default=None)
    retry: int = 0
    #: The run making the call (Agno's ``run_context.run_id``).
    run_id: str | None = None
    #: The agent running the tool (Agno's tools take it as ``agent``).
    agent: Any = None
    #: The run's `RunContext` (Agno's tools take it as ``run_context``).
    run_context: RunContext | None = None


#: What runs when the model calls a tool: its arguments and context in, the result out.
Handler = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
