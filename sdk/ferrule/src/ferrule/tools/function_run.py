"""How an Agno `Function` runs a call: its ``pre_hook``, its ``tool_hooks`` (each wrapping the
next, the tool at the centre), the tool itself (its result possibly from the cache), then its
``post_hook``.

- A hook takes, by name, what it wants of: ``fc`` (the `FunctionCall`, its ``result`` set
  for the post-hook), ``agent``, ``run_context``, and for a tool hook ``function_name`` /
  ``name``, ``function_call`` / ``function`` / ``func`` (the next step: call it with the
  arguments) and ``arguments`` / ``args``. A sync hook runs in a worker thread and its next
  step is a plain call; an async hook runs on the loop and awaits its next step.
- A failing pre- or post-hook is logged and the call goes on, as in Agno; `AgentRunException`
  (retry or stop the run) goes through.
- ``cache_results``: a result that is JSON is kept in a file under ``cache_dir`` (by
  default the temporary folder's ``ferrule_tool_cache``), keyed by the tool's name, the
  arguments and the caller (user and session), for ``cache_ttl`` seconds; a call with the
  same key within that time is answered from the file, the hooks still run around it. The
  folder is private to this user, and no link is followed out of it.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..exceptions import AgentRunException
from .tool_context import ToolContext

if TYPE_CHECKING:
    from .function import Function

__all__ = ["cache_file", "hook_arguments", "run_function"]

_LOG = logging.getLogger("ferrule")
#: Bumped when what a cache file holds changes meaning: old files are then not read.
CACHE_VERSION = 1


def hook_arguments(hook: Callable[..., Any], offered: dict[str, Any]) -> dict[str, Any]:
    """Of ``offered``, what ``hook`` takes by name (all of it if it takes ``**kwargs``)."""
    try:
        parameters = inspect.signature(hook).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(offered)
    return {name: value for name, value in offered.items() if name in parameters}


async def _call_hook(hook: Callable[..., Any], arguments: dict[str, Any]) -> Any:
    if inspect.iscoroutinefunction(hook):
        return await hook(**arguments)
    result = await asyncio.to_thread(hook, **arguments)
    return await result if inspect.isawaitable(result) else result


async def _side_hook(hook: Callable[..., Any] | None, call: Any, context: ToolContext) -> None:
    if hook is None:
        return
    offered = {"fc": call, "agent": context.agent, "run_context": context.run_context}
    try:
        await _call_hook(hook, hook_arguments(hook, offered))
    except AgentRunException:
        raise
    except Exception as exc:  # Agno logs a failing side hook and goes on
        _LOG.warning("the hook %s of tool %s failed: %s", _name(hook), call.function.name, exc)


def _name(hook: Any) -> str:
    return str(getattr(hook, "__name__", type(hook).__name__))


def cache_file(function: Function, arguments: dict[str, Any], context: ToolContext) -> Path:
    """Where a call's cached result is kept (see the module docstring)."""
    caller = [context.user_id, context.session_id]
    key = json.dumps([function.name, caller, arguments], sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()
    base = Path(function.cache_dir or Path(tempfile.gettempdir()) / "ferrule_tool_cache")
    folder = base / f"v{CACHE_VERSION}" / function.name
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder / f"{digest}.json"


def _cached(path: Path, ttl: int) -> tuple[bool, Any]:
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False, None
    try:
        with os.fdopen(descriptor, encoding="utf-8") as file:
            entry = json.load(file)
    except (OSError, ValueError):
        return False, None
    if not isinstance(entry, dict) or time.time() - float(entry.get("at", 0)) > ttl:
        return False, None
    return True, entry.get("result")


def _store(path: Path, result: Any) -> None:
    try:
        text = json.dumps({"at": time.time(), "result": result})
    except (TypeError, ValueError):
        return  # only JSON is kept
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temporary, path)


async def run_function(function: Function, arguments: dict[str, Any], context: ToolContext) -> Any:
    """One call of ``function`` with the model's ``arguments`` (see the module docstring)."""
    from .function import FunctionCall

    call = FunctionCall(function=function, arguments=dict(arguments), call_id=context.tool_call.id)
    await _side_hook(function.pre_hook, call, context)
    arguments = dict(call.arguments or {})
    loop = asyncio.get_running_loop()
    store: Path | None = None
    hit, cached = False, None
    if function.cache_results:
        store = cache_file(function, arguments, context)
        hit, cached = _cached(store, function.cache_ttl)
    made: list[Any] = []

    async def tool(args: dict[str, Any]) -> Any:
        if hit and args == arguments:
            return cached
        result = await function.handler(args, context)
        made.append(result)
        return result

    hooks = list(function.tool_hooks or ())

    async def step(index: int, args: dict[str, Any]) -> Any:
        if index == len(hooks):
            return await tool(args)
        hook = hooks[index]

        def next_sync(**kwargs: Any) -> Any:
            return asyncio.run_coroutine_threadsafe(step(index + 1, kwargs), loop).result()

        def next_async(**kwargs: Any) -> Awaitable[Any]:
            return step(index + 1, kwargs)

        following = next_async if inspect.iscoroutinefunction(hook) else next_sync
        offered = {
            "function_name": function.name,
            "name": function.name,
            "function_call": following,
            "function": following,
            "func": following,
            "arguments": args,
            "args": args,
            "agent": context.agent,
            "run_context": context.run_context,
            "fc": call,
        }
        return await _call_hook(hook, hook_arguments(hook, offered))

    try:
        call.result = await step(0, arguments)
    except AgentRunException:
        raise
    except Exception as exc:
        call.error = str(exc)
        raise
    if store is not None and not hit and len(made) == 1:
        _store(store, made[0])
    await _side_hook(function.post_hook, call, context)
    return call.result
