"""The preset tools, passed to an agent by name (``"calculator"``, ``"http_request"``,
``"frankfurter"``, ``"web_fetch"``, ``"web_search_duckduckgo"``): operators of plugins, or
REST APIs.

``Agent.add_tools_from_preset(name)`` (Ailoy's spelling) adds a preset's tools, as
``tools=[name]`` does. Each REST preset's endpoint can be moved (a mirror, a proxy, a
test server) with an environment variable named in its docstring.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ferrule_kernel import InvalidInputError

from .tool import Tool

__all__ = [
    "PRESETS",
    "calculator",
    "frankfurter",
    "http_request",
    "preset_tools",
    "web_fetch",
    "web_search_duckduckgo",
]


def calculator() -> Tool:
    """The ``calculator`` operator (ferrule-calculator): evaluates an arithmetic expression."""
    return Tool.from_operator(
        "calculator",
        description="Evaluate an arithmetic expression, e.g. '2 * (3 + 4) / 5', and return its value.",
        parameters={
            "type": "object",
            "properties": {
                "expression": {"type": "string", "description": "The expression to evaluate."}
            },
            "required": ["expression"],
        },
    )


def http_request() -> Tool:
    """The ``http_request`` operator (ferrule-http-request): sends an HTTP request, within
    the host's address policy and timeout (the model sets neither)."""
    return Tool.from_operator(
        "http_request",
        description="Send an HTTP request and return the reply's status, headers and body.",
        parameters={
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The URL to request."},
                "method": {
                    "enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"],
                    "description": "The HTTP method (default GET).",
                },
                "headers": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Request headers.",
                },
                "body": {"type": "string", "description": "The request body."},
            },
            "required": ["url"],
        },
    )


#: Where `frankfurter` asks, unless ``$FERRULE_FRANKFURTER_URL`` says otherwise.
FRANKFURTER_URL = "https://api.frankfurter.dev/v1/latest"


def frankfurter() -> Tool:
    """Currency exchange rates from the Frankfurter API (no key): ``GET`` its latest rates
    of ``symbols`` against ``base``. ``$FERRULE_FRANKFURTER_URL`` moves the endpoint."""
    return Tool.rest_api(
        "frankfurter",
        os.environ.get("FERRULE_FRANKFURTER_URL") or FRANKFURTER_URL,
        description="Get the latest exchange rates of currencies against a base currency.",
        parameters={
            "type": "object",
            "properties": {
                "base": {
                    "type": "string",
                    "description": "The ISO 4217 code of the currency the rates are against.",
                },
                "symbols": {
                    "type": "string",
                    "description": "ISO 4217 codes of the currencies wanted, comma-separated "
                    "(default: all).",
                },
            },
            "required": ["base"],
        },
        headers={"accept": "application/json"},
    )


def web_search_duckduckgo() -> Tool:
    """Ailoy 0.2's builtin ``web_search_duckduckgo`` (ferrule-duckduckgo; `builtins`)."""
    from .builtins import web_search_duckduckgo as builtin

    return builtin()


def web_fetch() -> Tool:
    """Ailoy 0.2's builtin ``web_fetch`` (ferrule-http-request; `builtins`)."""
    from .builtins import web_fetch as builtin

    return builtin()


# The builtin ``terminal`` is deliberately no preset: a preset can be named by whoever picks
# tools by name (the web chat, the CLI), a shell only by code (`Tool.new_builtin`).
PRESETS: dict[str, Callable[[], Tool]] = {
    "calculator": calculator,
    "frankfurter": frankfurter,
    "http_request": http_request,
    "web_fetch": web_fetch,
    "web_search_duckduckgo": web_search_duckduckgo,
}


#: Ailoy 0.1's presets of keyed third-party APIs (The Movie Database, the New York Times).
NOT_SHIPPED = ("tmdb", "nytimes")


def preset_tools(name: str, authenticator: Any = None) -> list[Tool]:
    """A preset's tools by its name. ``authenticator`` is Ailoy's hook for presets of APIs
    that need a key; none of ferrule's presets do, so it must be None."""
    if name in NOT_SHIPPED:
        raise InvalidInputError(
            f"Ailoy 0.1's {name!r} preset is not shipped (its REST API is a third party's, "
            "whose definition ferrule would have to keep in step): add that API's definition "
            "with agent.add_restapi_tool(tool_def, authenticator=...)",
            field="preset_name",
        )
    if name not in PRESETS:
        raise InvalidInputError(
            f"unknown tool preset {name!r}; presets: {', '.join(sorted(PRESETS))}",
            field="preset_name",
        )
    if authenticator is not None:
        raise InvalidInputError(
            f"the preset {name!r} takes no authenticator", field="authenticator"
        )
    return [PRESETS[name]()]
