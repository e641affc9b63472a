"""What a run knows besides its messages, Agno's way: its ``dependencies`` (the agent's,
the call's over them, each function among them called as the run starts:
`resolve_dependencies`), its ``metadata`` (the call's, the agent's over them:
`merged_metadata`) and knowledge filters (`effective_filters`); and how they reach the
model: ``{name}`` placeholders of the system and user messages filled from the session
state, the dependencies, the metadata and the user id (``resolve_in_context``:
`format_variables`), and the dependencies after the user's message in an ``<additional
context>`` block (``add_dependencies_to_context``: `dependencies_block`).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import string
from collections import ChainMap
from collections.abc import Mapping
from typing import Any

import attrs
from ferrule_kernel import get_logger
from ferrule_kit.content.messages import TextPart

from ..tools.tool_context import RunContext

log = get_logger("ferrule.agent")


def merged_dependencies(
    agent: Mapping[str, Any] | None, call: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """A run's dependencies: the call's over the agent's (None when neither has any), a
    copy, so that resolving them changes neither."""
    if agent is None and call is None:
        return None
    return {**(agent or {}), **(call or {})}


def merged_metadata(
    call: Mapping[str, Any] | None, agent: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A run's metadata: the call's, with the agent's merged over it (the agent's value
    wins a key both have; nested dicts merge key by key), as Agno merges them."""
    merged = dict(call or {})
    _merge_into(merged, agent or {})
    return merged


def _merge_into(target: dict[str, Any], source: Mapping[str, Any]) -> None:
    for key, value in source.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            inner = dict(target[key])
            _merge_into(inner, value)
            target[key] = inner
        else:
            target[key] = value


def filters_dict(filters: Any) -> dict[str, Any] | None:
    """Knowledge filters as the stores' filter dict: a dict as it is, a list of
    `ferrule.filters` expressions as all of them (``$and``)."""
    if filters is None or isinstance(filters, dict):
        return filters
    conditions = [f.to_filter() if hasattr(f, "to_filter") else f for f in filters]
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else {"$and": conditions}


def effective_filters(agent: Any, call: Any) -> Any:
    """A run's knowledge filters: the call's over the agent's (a dict's keys replace the
    agent's; a list of expressions adds to the agent's list), as Agno's runs take them."""
    if not call:
        return agent or None
    if not agent:
        return call
    if isinstance(call, dict):
        return {**agent, **call} if isinstance(agent, dict) else call
    return [*agent, *call] if isinstance(agent, list) else call


async def resolve_dependencies(agent: Any, run_context: RunContext) -> None:
    """Call each function among ``run_context.dependencies`` (with ``agent`` and
    ``run_context`` when it names them; a sync one in a worker thread, an async one
    awaited) and keep what it returns in its place. A function that fails is logged and
    left as it was, as Agno leaves it."""
    dependencies = run_context.dependencies
    if not dependencies:
        return
    for key, value in list(dependencies.items()):
        if not callable(value):
            continue
        offered = {"agent": agent, "run_context": run_context}
        try:
            parameters = inspect.signature(value).parameters
            arguments = {k: v for k, v in offered.items() if k in parameters}
            if inspect.iscoroutinefunction(value):
                result = await value(**arguments)
            else:
                result = await asyncio.to_thread(value, **arguments)
                if inspect.isawaitable(result):
                    result = await result
        except Exception as exc:
            log.warning("dependency_not_resolved", dependency=key, error=repr(exc))
            continue
        dependencies[key] = result


def format_variables(text: str, run_context: RunContext | None) -> str:
    """``text`` with each ``{name}`` that names a key of the session state, the
    dependencies, the metadata (first found, in that order) or ``user_id`` replaced by its
    value; any other braces are left as they are."""
    if run_context is None or "{" not in text:
        return text
    variables: ChainMap[str, Any] = ChainMap(
        run_context.session_state or {},
        run_context.dependencies or {},
        run_context.metadata or {},
        {"user_id": run_context.user_id} if run_context.user_id is not None else {},
    )
    converted = text
    for name in variables:
        converted = re.sub(r"\{" + re.escape(str(name)) + r"\}", "${" + str(name) + "}", converted)
    try:
        return string.Template(converted).safe_substitute(variables)
    except ValueError as exc:  # a stray "$" the template cannot read
        log.warning("context_not_formatted", error=str(exc))
        return text


def dependencies_text(dependencies: Mapping[str, Any]) -> str:
    """The dependencies as indented JSON (what JSON cannot hold, as its text)."""
    return json.dumps(dict(dependencies), indent=2, default=str, ensure_ascii=False)


def dependencies_block(dependencies: Mapping[str, Any]) -> str:
    """What ``add_dependencies_to_context`` adds after the user's message."""
    return f"\n\n<additional context>\n{dependencies_text(dependencies)}\n</additional context>"


def own_user_message(run: Any) -> int | None:
    """Where the user message made from ``run``'s prompt is among its messages (its last
    user message, when the input was a prompt: a string, or a list of strings), else None:
    a run given messages keeps them as they are."""
    given = run.input
    prompt = isinstance(given, str) or (
        isinstance(given, list) and bool(given) and all(isinstance(i, str) for i in given)
    )
    if not prompt:
        return None
    return next(
        (i for i in range(len(run.messages) - 1, -1, -1) if run.messages[i].role == "user"), None
    )


def fill_user_message(run: Any, run_context: RunContext) -> None:
    """``resolve_in_context``: the ``{name}`` placeholders of the run's own user message
    filled (`format_variables`)."""
    at = own_user_message(run)
    if at is None:
        return
    message = run.messages[at]
    parts = [
        attrs.evolve(part, text=format_variables(part.text, run_context))
        if isinstance(part, TextPart)
        else part
        for part in message.contents
    ]
    run.messages[at] = attrs.evolve(message, contents=parts)


def add_dependencies(run: Any, dependencies: Mapping[str, Any] | None) -> None:
    """``add_dependencies_to_context``: the run's dependencies after its own user message."""
    at = own_user_message(run)
    if at is None or dependencies is None:
        return
    message = run.messages[at]
    block = TextPart(dependencies_block(dependencies))
    run.messages[at] = attrs.evolve(message, contents=[*message.contents, block])
