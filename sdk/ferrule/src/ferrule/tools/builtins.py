"""Ailoy 0.2's builtin tools, ``Tool.new_builtin(kind, **config)``, over the operators of
ferrule's tool plugins:

| kind | operator (plugin) | result |
|---|---|---|
| ``terminal`` | ``terminal`` (ferrule-terminal) | ``{"stdout", "stderr", "exit_code", "timed_out", "truncated"}`` |
| ``web_search_duckduckgo`` (``web_search``) | ``duckduckgo_search`` (ferrule-duckduckgo) | ``{"results": "Found N search results: ..."}`` |
| ``web_fetch`` | ``web_fetch`` (ferrule-http-request) | ``{"results": <the page as Markdown>}`` |
| ``calculator`` | ``calculator`` (ferrule-calculator) | ``{"value": number}`` |

Each tool calls its operator on the agent's runtime in a run, and on the process's shared
runtime when called directly (``await tool(command="pwd")``). Endpoints are the plugins'
own settings: ``base_url`` / ``$FERRULE_DUCKDUCKGO_URL``, ``proxy_url`` /
``$FERRULE_WEB_FETCH_PROXY``.

Host policy wins (`ferrule_kit.network.hostpolicy`): the settings are the host's, and the model
sees only the parameters below. A call whose arguments name anything else (a setting, an
allow-list, a timeout, a proxy) is refused with an error the model reads, and a setting
the host gave (``cwd``) is no longer offered to the model at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ferrule_kernel import InvalidInputError
from ferrule_kit.network.hostpolicy import checked_arguments, refusal

from .tool import Tool
from .tool_context import ToolContext

__all__ = ["BUILTINS", "builtin_tool", "format_search_results"]


def _settings(kind: str, config: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    unknown = sorted(set(config) - set(known))
    if unknown:
        raise InvalidInputError(
            f"the builtin tool {kind!r} has no setting {unknown[0]!r}; its settings: "
            + (", ".join(known) or "none"),
            field=unknown[0],
        )
    return {key: value for key, value in config.items() if value is not None}


#: ferrule-terminal's allow-list variable: while it (or the ``allow`` setting) is in force,
#: the model may not set the environment either (``PATH``, ``LD_PRELOAD``, ``GIT_SSH_COMMAND``
#: would change what a listed program runs).
TERMINAL_ALLOW_VARIABLE = "FERRULE_TERMINAL_ALLOW"

_TERMINAL_PARAMETERS: dict[str, Any] = {
    "command": {"type": "string", "description": "The command to execute."},
    "cwd": {"type": "string", "description": "Optional working directory."},
    "env": {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": "Optional environment variables to set.",
    },
    "stdin": {"type": "string", "description": "Optional text sent to stdin."},
}


def _offered(properties: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters the model sees: those the host did not fix."""
    return {name: schema for name, schema in properties.items() if name not in settings}


def terminal(**config: Any) -> Tool:
    """A shell command (ferrule-terminal's ``terminal``). Settings: ``cwd`` (fixes the working
    directory: the model is no longer offered one), ``timeout``, ``max_output_bytes``,
    ``allow`` (the only programs that may run; no shell then, and no ``env`` from the
    model)."""
    settings = _settings("terminal", config, ("cwd", "timeout", "max_output_bytes", "allow"))

    def allow_listed() -> bool:
        return "allow" in settings or bool(os.environ.get(TERMINAL_ALLOW_VARIABLE, "").strip())

    properties = _offered(_TERMINAL_PARAMETERS, settings)
    if allow_listed():
        del properties["env"]

    async def run(arguments: dict[str, Any], context: ToolContext) -> Any:
        if "env" in arguments and allow_listed():
            raise refusal("terminal", "env", "the environment of an allow-listed program")
        inputs = checked_arguments(
            "terminal", arguments, fixed=settings, offered=_TERMINAL_PARAMETERS
        )
        return await context.runtime.acall("terminal", inputs)

    return Tool(
        "terminal",
        "Execute a command on this machine with bash (/bin/sh where bash is missing) and "
        "return its stdout, stderr and exit_code.",
        {"type": "object", "properties": properties, "required": ["command"]},
        run,
    )


def format_search_results(results: list[dict[str, Any]]) -> str:
    """Search results as one text, the way Ailoy's ``web_search_duckduckgo`` shows them:
    ``Found N search results:`` then each result's position, title, URL and summary."""
    if not results:
        return "No results were found for the query (or the search engine refused it); try other words."
    lines = [f"Found {len(results)} search results:", ""]
    for position, result in enumerate(results, 1):
        lines += [
            f"{position}. {result['title']}",
            f"   URL: {result['href']}",
            f"   Summary: {result['body']}",
            "",
        ]
    return "\n".join(lines)


def web_search_duckduckgo(**config: Any) -> Tool:
    """A DuckDuckGo web search (ferrule-duckduckgo's ``duckduckgo_search``). Settings:
    ``base_url`` (the endpoint; default ``$FERRULE_DUCKDUCKGO_URL``, else DuckDuckGo's),
    ``region``, ``safesearch``, ``timeout``."""
    settings = _settings(
        "web_search_duckduckgo", config, ("base_url", "region", "safesearch", "timeout")
    )

    properties = {
        "query": {"type": "string", "description": "The search query string."},
        "max_results": {
            "type": "integer",
            "minimum": 1,
            "maximum": 30,
            "description": "Maximum number of results to return (default: 10).",
        },
    }

    async def run(arguments: dict[str, Any], context: ToolContext) -> Any:
        inputs = checked_arguments(
            "web_search_duckduckgo", arguments, fixed=settings, offered=properties
        )
        found = await context.runtime.acall("duckduckgo_search", {"max_results": 10, **inputs})
        return {"results": format_search_results(found["results"])}

    return Tool(
        "web_search_duckduckgo",
        "Search webpages using DuckDuckGo and return formatted results.",
        {"type": "object", "properties": properties, "required": ["query"]},
        run,
    )


def web_fetch(**config: Any) -> Tool:
    """A web page's text as Markdown (ferrule-http-request's ``web_fetch``, with its address
    policy). Settings: ``proxy_url`` (default ``$FERRULE_WEB_FETCH_PROXY``), ``max_chars``
    (8000), ``format`` (``markdown`` or ``text``), ``timeout``."""
    settings = _settings("web_fetch", config, ("proxy_url", "max_chars", "format", "timeout"))

    properties = {
        "url": {"type": "string", "description": "The webpage URL to fetch content from."}
    }

    async def run(arguments: dict[str, Any], context: ToolContext) -> Any:
        inputs = checked_arguments("web_fetch", arguments, fixed=settings, offered=properties)
        fetched = await context.runtime.acall("web_fetch", inputs)
        return {"results": fetched["content"]}

    return Tool(
        "web_fetch",
        "Fetch and parse content from a webpage URL.",
        {"type": "object", "properties": properties, "required": ["url"]},
        run,
    )


def calculator(**config: Any) -> Tool:
    """The ``calculator`` preset (ferrule-calculator); no settings."""
    from .presets import calculator as preset

    _settings("calculator", config, ())
    return preset()


BUILTINS: dict[str, Callable[..., Tool]] = {
    "terminal": terminal,
    "web_search_duckduckgo": web_search_duckduckgo,
    "web_search": web_search_duckduckgo,
    "web_fetch": web_fetch,
    "calculator": calculator,
}


def builtin_tool(kind: str, **config: Any) -> Tool:
    """The builtin tool ``kind`` with its settings (`Tool.new_builtin`)."""
    make = BUILTINS.get(kind) if isinstance(kind, str) else None
    if make is None:
        raise InvalidInputError(
            f"unknown builtin tool {kind!r}; builtins: {', '.join(sorted(BUILTINS))}",
            field="kind",
        )
    return make(**config)
