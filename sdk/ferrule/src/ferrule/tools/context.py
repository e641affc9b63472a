"""`ToolContext`: what a tool's handler may need besides its arguments, and the handler's
signature (`Handler`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import attrs
from ferrule_kit.messages import ToolCall

__all__ = ["DepsT", "Handler", "ToolContext"]

DepsT = TypeVar("DepsT")


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


#: What runs when the model calls a tool: its arguments and context in, the result out.
Handler = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
