"""The agent's hooks, as Agno has them: ``pre_hooks`` see a run's `RunInput` before the
model does, ``post_hooks`` its `RunOutput` once the reply is final (functions, sync or
async, or `BaseGuardrail`s), and ``tool_hooks`` wrap each tool call.

A pre- or post-hook is called with the arguments its signature names, of ``run_input``
(pre-hooks) or ``run_output`` (post-hooks), ``agent``, ``session_id``, ``user_id``,
``session_state``, ``metadata`` and ``debug_mode``; all of them if it takes ``**kwargs``.
Raising `InputCheckError` / `OutputCheckError` (or any typed `FerruleError`) stops the run
with that error. A hook that fails otherwise stops the run too, with `HookError`: a
broken guardrail must not let the input through (Agno logs it and goes on). Sync hooks,
and guardrails with only a sync ``check``, run in a worker thread, so a slow one never
stalls the runtime's loop.

A tool hook is called as ``hook(function_name=..., function_call=..., arguments=...)``
(and ``agent=`` if it asks) and returns the call's result: it runs its own code before
and after ``function_call(**arguments)``, may change the arguments or the result, or not
call the tool at all. Hooks nest in list order, the first outermost. In an async hook
``function_call(...)`` returns an awaitable; a sync hook runs in a worker thread (so it
never blocks the runtime's loop) and gets the result itself.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ferrule_kernel import FerruleError, InvalidInputError
from ferrule_kit.guardrails import BaseGuardrail

from .run_errors import HookError


def check_hooks(hooks: Sequence[Any] | None, field: str) -> list[Any]:
    """The hooks of an agent setting, each a callable or a guardrail."""
    if hooks is None:
        return []
    if isinstance(hooks, (str, bytes)) or not isinstance(hooks, Sequence):
        raise InvalidInputError("must be a list of hooks", field=field)
    for index, hook in enumerate(hooks):
        if not (callable(hook) or _is_guardrail(hook)):
            raise InvalidInputError(
                f"a hook is a function or a guardrail, got {type(hook).__name__}",
                field=f"{field}[{index}]",
            )
    return list(hooks)


def _is_guardrail(hook: Any) -> bool:
    return isinstance(hook, BaseGuardrail) or callable(getattr(hook, "async_check", None))


def _checks_in_thread(guardrail: Any) -> bool:
    """A `BaseGuardrail` with only a sync `check`: run in a worker thread, as sync hooks are
    (a scan of a long input must not stall the runtime's loop)."""
    return (
        isinstance(guardrail, BaseGuardrail)
        and type(guardrail).async_check is BaseGuardrail.async_check
    )


def hook_name(hook: Any) -> str:
    """A hook's name in the run's events: a function's own, else its class's (an object
    with ``__call__``, a guardrail, a ``functools.partial``), as Agno names it."""
    return getattr(hook, "__name__", None) or type(hook).__name__


def _name(hook: Any) -> str:
    return getattr(hook, "__qualname__", None) or type(hook).__name__


def _arguments(function: Callable[..., Any], offered: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of ``offered`` that ``function`` names (all with ``**kwargs``)."""
    parameters = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(offered)
    return {name: value for name, value in offered.items() if name in parameters}


def _is_async(function: Any) -> bool:
    """An ``async def`` function, or an object whose ``__call__`` is one."""
    call = type(function).__call__ if not inspect.isroutine(function) else None
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call)


async def run_hooks(
    hooks: Sequence[Any],
    subject: Any,
    offered: Mapping[str, Any],
    told: Callable[[str, bool], None] | None = None,
) -> None:
    """Call each hook in order on ``subject`` (the `RunInput` or the `RunOutput`, also in
    ``offered`` under its name), telling ``told`` each hook's name as it starts (False) and
    as it returns (True): the run's hook events."""
    for index, hook in enumerate(hooks):
        if told is not None:
            told(hook_name(hook), False)
        try:
            if _is_guardrail(hook) and _checks_in_thread(hook):
                await asyncio.to_thread(hook.check, subject)
            elif _is_guardrail(hook):
                await hook.async_check(subject)
            elif _is_async(hook):
                await hook(**_arguments(hook, offered))
            else:
                await asyncio.to_thread(hook, **_arguments(hook, offered))
        except FerruleError:
            raise
        except Exception as exc:
            raise HookError(
                f"the hook {_name(hook)} failed: {type(exc).__name__}: {exc}",
                hook=_name(hook),
                index=index,
            ) from exc
        if told is not None:
            told(hook_name(hook), True)


async def call_tool(
    hooks: Sequence[Callable[..., Any]],
    function_name: str,
    arguments: dict[str, Any],
    invoke: Callable[[dict[str, Any]], Awaitable[Any]],
    agent: Any,
) -> Any:
    """``invoke(arguments)`` wrapped in ``hooks`` (see the module docstring)."""
    loop = asyncio.get_running_loop()

    async def step(index: int, arguments: dict[str, Any]) -> Any:
        if index == len(hooks):
            return await invoke(arguments)
        hook = hooks[index]
        offered: dict[str, Any] = {
            "function_name": function_name,
            "arguments": arguments,
            "agent": agent,
        }
        if _is_async(hook):

            def call_async(**kwargs: Any) -> Awaitable[Any]:
                return step(index + 1, kwargs)

            offered["function_call"] = call_async
            return await hook(**_arguments(hook, offered))

        def call_blocking(**kwargs: Any) -> Any:  # in the hook's worker thread
            return asyncio.run_coroutine_threadsafe(step(index + 1, kwargs), loop).result()

        offered["function_call"] = call_blocking
        return await asyncio.to_thread(hook, **_arguments(hook, offered))

    return await step(0, dict(arguments))
