"""Ailoy 0.1's REST API tools: a definition made a `Tool` (`restapi_tool`, behind
``Agent.add_restapi_tool``), and the authenticators that sign its requests
(`BearerAuthenticator`, or any callable from the request to the request)::

    {"type": "restapi",
     "description": {"name": ..., "description": ..., "parameters": {...}},
     "behavior": {"baseURL": "https://api.example.com/v1/items/${item}", "method": "GET",
                  "headers": {...}, "body": "...${field}...", "outputPath": "results[0]"}}

A call fills the ``${name}`` placeholders of ``baseURL`` (URL-quoted) and ``body`` from the
arguments of those names and sends the other arguments as the query string, as Ailoy did.
The request ``{url, method, headers, body}`` passes through the authenticator, then the
runtime's ``http_request`` operator (ferrule-http-request: the host's address policy and
timeout apply, whatever the definition says). The reply's JSON is the result, narrowed by
``outputPath`` (a JMESPath expression) when the definition has one; a status of 400 or
more is a `ToolError` the model reads.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from ferrule_kernel import InvalidInputError
from ferrule_kit.models.lm import FunctionDescription
from ferrule_kit.network.http import scrub

from .errors import ToolError
from .function_schema import schema_validator
from .tool import Tool
from .tool_context import ToolContext

__all__ = ["BearerAuthenticator", "ToolAuthenticator", "restapi_tool"]

#: A request as an authenticator sees it: ``url``, ``method``, ``headers``, ``body``.
Request = dict[str, Any]
Authenticator = Callable[[Request], Request]

_PLACEHOLDER = re.compile(r"\$\{\s*([^}\s]+)\s*\}")
_METHODS = ("GET", "POST", "PUT", "DELETE")
_BEHAVIOR_FIELDS = {"baseURL", "method", "authentication", "headers", "body", "outputPath"}


class ToolAuthenticator(ABC):
    """Signs a REST tool's request (Ailoy 0.1's): `apply` takes the request and returns it
    signed; an authenticator is called as a function."""

    def __call__(self, request: Request) -> Request:
        return self.apply(request)

    @abstractmethod
    def apply(self, request: Request) -> Request: ...


class BearerAuthenticator(ToolAuthenticator):
    """Sends ``Authorization: <bearer_format> <token>`` (Ailoy 0.1's); the token appears
    in no repr or tool error."""

    def __init__(self, token: str, bearer_format: str = "Bearer") -> None:
        if not isinstance(token, str) or not token:
            raise InvalidInputError("must be a non-empty string", field="token")
        self.token = token
        self.bearer_format = bearer_format

    def __repr__(self) -> str:
        return f"BearerAuthenticator(bearer_format={self.bearer_format!r})"

    def apply(self, request: Request) -> Request:
        headers = {**(request.get("headers") or {}), "Authorization": self._value()}
        return {**request, "headers": headers}

    def _value(self) -> str:
        return f"{self.bearer_format} {self.token}"


def _behavior(definition: Mapping[str, Any]) -> dict[str, Any]:
    behavior = definition.get("behavior")
    if not isinstance(behavior, Mapping):
        raise InvalidInputError("must be an object", field="tool_def.behavior")
    unknown = set(behavior) - _BEHAVIOR_FIELDS
    if unknown:
        raise InvalidInputError("unknown field", field=f"tool_def.behavior.{min(unknown)}")
    checks: list[tuple[str, bool, str]] = [
        ("baseURL", isinstance(behavior.get("baseURL"), str), "must be a URL string"),
        ("method", behavior.get("method") in _METHODS, f"must be one of {', '.join(_METHODS)}"),
        ("authentication", behavior.get("authentication") in (None, "bearer"), "must be 'bearer'"),
        ("body", isinstance(behavior.get("body", ""), str), "must be a string template"),
        ("outputPath", isinstance(behavior.get("outputPath", ""), str), "must be a string"),
    ]
    headers = behavior.get("headers") or {}
    valid_headers = isinstance(headers, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    )
    checks.append(("headers", valid_headers, "must map header names to strings"))
    for field, ok, message in checks:
        if not ok:
            raise InvalidInputError(message, field=f"tool_def.behavior.{field}")
    return {**behavior, "headers": dict(headers)}


def _render(template: str, arguments: Mapping[str, Any], quoted: bool) -> tuple[str, set[str]]:
    """``template`` with each ``${name}`` replaced by that argument (URL-quoted when
    ``quoted``; a name with no argument stays as written), and the names it used."""
    used: set[str] = set()

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in arguments:
            return match.group(0)
        used.add(name)
        text = str(arguments[name])
        return quote(text, safe="") if quoted else text

    return _PLACEHOLDER.sub(value, template), used


def _request(behavior: Mapping[str, Any], arguments: Mapping[str, Any]) -> Request:
    url, in_path = _render(behavior["baseURL"], arguments, quoted=True)
    body: str | None = None
    in_body: set[str] = set()
    if behavior.get("body") is not None:
        body, in_body = _render(behavior["body"], arguments, quoted=False)
    query = {k: v for k, v in arguments.items() if k not in in_path | in_body}
    if query:
        parts = urlsplit(url)
        joined = "&".join(p for p in (parts.query, urlencode(query)) if p)
        url = urlunsplit(parts._replace(query=joined))
    request: Request = {"url": url, "method": behavior["method"], "headers": behavior["headers"]}
    if body:
        request["body"] = body
    return request


def restapi_tool(tool_def: Mapping[str, Any], authenticator: Authenticator | None = None) -> Tool:
    """A tool from Ailoy 0.1's REST API definition (the module docstring), its requests
    signed by ``authenticator``. The definition is checked now: a bad field is an
    `InvalidInputError` naming it (``tool_def.behavior.method``)."""
    if not isinstance(tool_def, Mapping):
        raise InvalidInputError("must be a REST API tool definition (a dict)", field="tool_def")
    if tool_def.get("type") != "restapi":
        raise InvalidInputError("must be 'restapi'", field="tool_def.type")
    description = FunctionDescription.model_validate(dict(tool_def.get("description") or {}))
    behavior = _behavior(tool_def)
    if authenticator is not None and not callable(authenticator):
        raise InvalidInputError("must be callable (request -> request)", field="authenticator")
    output_path = None
    if behavior.get("outputPath"):
        import jmespath
        from jmespath.exceptions import JMESPathError

        try:
            output_path = jmespath.compile(behavior["outputPath"])
        except JMESPathError as exc:
            raise InvalidInputError(
                f"not a JMESPath expression: {exc}", field="tool_def.behavior.outputPath"
            ) from None
    validate = schema_validator(description.parameters)

    async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
        validate(arguments)
        unsigned = _request(behavior, arguments)
        request = unsigned if authenticator is None else authenticator(dict(unsigned))
        # what signing added (a header's key, a key in the URL) stays out of errors
        added = (request.get("headers") or {}).items() - unsigned["headers"].items()
        secrets = [value for _, value in added if isinstance(value, str)]
        reply = await context.runtime.acall("http_request", request)
        where = f"{unsigned['method']} {unsigned['url']}"
        status = reply["status_code"]
        if status >= 400:
            text = scrub(str(reply.get("body", ""))[:500], secrets)
            raise ToolError(f"{where} answered HTTP {status}: {text}", status=status)
        try:
            output = json.loads(reply["body"])
        except (TypeError, ValueError):
            raise ToolError(f"{where} answered no JSON") from None
        return output if output_path is None else output_path.search(output)

    return Tool(description.name, description.description, description.parameters, handler)
