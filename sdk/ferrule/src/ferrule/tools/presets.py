"""The preset tools: operators of plugins, passed to an agent by name (``"calculator"``,
``"http_request"``)."""

from __future__ import annotations

from collections.abc import Callable

from .tool import Tool

__all__ = ["PRESETS", "calculator", "http_request"]


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
    """The ``http_request`` operator (ferrule-http-request): sends an HTTP request."""
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
                "timeout": {"type": "number", "description": "Seconds to wait for the reply."},
            },
            "required": ["url"],
        },
    )


PRESETS: dict[str, Callable[[], Tool]] = {"calculator": calculator, "http_request": http_request}
