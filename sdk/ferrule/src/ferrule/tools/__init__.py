"""Tools an `Agent` lets its model call.

Every kind of tool becomes one `Tool`: a name, a description, a JSON schema of its
arguments and an async handler. Build them from

- a Python function, sync or async (`Tool.from_function`, or just pass the function;
  the `tool` decorator sets options): the schema comes from its type hints (``Literal``,
  ``Optional``, lists, nested attrs classes, via `ferrule_kernel.json_schema`) and the
  parameter descriptions from its docstring (Google, NumPy or reST style);
- a JSON schema and a callable (`Tool.from_schema`);
- a REST endpoint (`Tool.rest_api`: URL template, method, headers, bearer token);
- an operator of the runtime (`Tool.from_operator`), as the presets `calculator` and
  `http_request` are (pass the preset's name as a tool);
- an MCP server (`ferrule.mcp.MCPServer`), which gives a whole set of tools;
- a toolkit: `ferrule.tools.duckduckgo.DuckDuckGoTools` (web search, ferrule-duckduckgo).

A handler's result is sent to the model as JSON text. A handler that raises, runs past
its ``timeout`` or returns something that is not JSON-serialisable gives the model an
error result instead (`ToolError`); the agent's run goes on. (A sync function past its
timeout cannot be stopped: it finishes in its worker thread and its result is dropped.)
A handler that raises `ModelRetry` sends its message to the model as the result, to try
again, at most ``Tool.retries`` times a run.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, overload, runtime_checkable

import attrs
from ferrule_kernel import (
    FerruleError,
    InvalidInputError,
    field_errors,
    in_range,
    json_schema,
    register_error_kind,
)
from ferrule_kit.messages import ToolCall, converter

__all__ = [
    "FunctionTool",
    "ModelRetry",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRetriesExceededError",
    "Toolset",
    "as_tools",
    "calculator",
    "http_request",
    "parse_docstring",
    "tool",
]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@register_error_kind
class ToolError(FerruleError):
    """A tool call that failed; the model is told, and the run goes on."""

    kind = "tool_error"


class ModelRetry(Exception):  # pydantic-ai's name, which its users know
    """Raised by a tool to have the model try again: ``message`` goes back to the model as
    the call's result. A tool may be retried ``Tool.retries`` times in a run; one more
    ends the run with `ToolRetriesExceededError`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@register_error_kind
class ToolRetriesExceededError(FerruleError):
    """A tool raised `ModelRetry` more often than its ``retries`` allow; the run stops."""

    kind = "tool_retries_exceeded"


DepsT = TypeVar("DepsT")
#: A function tool's parameters and return type (`FunctionTool`).
P = ParamSpec("P")
R = TypeVar("R")


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


Handler = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidInputError(
            f"a tool name is 1-64 letters, digits, '_' or '-', got {name!r}", field="name"
        )
    return name


@attrs.define(eq=False)
class Tool:
    """A tool: what the model sees (name, description, parameters) and what runs."""

    name: str = attrs.field(converter=_check_name)
    description: str
    #: JSON schema of the arguments object.
    parameters: dict[str, Any]
    handler: Handler = attrs.field(repr=False)
    #: Pause the run for a human's confirmation before each call (see `Agent.continue_run`).
    requires_confirmation: bool = False
    #: Seconds a call may take before it counts as failed; None: the agent's default.
    timeout: float | None = None
    #: Times the tool may raise `ModelRetry` in one run before the run stops.
    retries: int = attrs.field(default=1, validator=in_range(0))

    def to_dict(self) -> dict[str, Any]:
        """The model-facing description, ``{"type": "function", "function": {...}}``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    async def invoke(self, arguments: dict[str, Any], context: ToolContext) -> Any:
        return await self.handler(arguments, context)

    # -- constructors ------------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        function: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        requires_confirmation: bool = False,
        timeout: float | None = None,
        retries: int = 1,
    ) -> FunctionTool[P, R]:
        """A tool calling ``function`` (sync functions run in a worker thread), which can
        still be called as the function (`FunctionTool`)."""
        summary, parameters, handler = _describe_function(function)
        return FunctionTool(
            name or function.__name__,
            description if description is not None else summary,
            parameters,
            handler,
            requires_confirmation,
            timeout,
            retries,
            function=function,
        )

    @classmethod
    def from_schema(
        cls,
        schema: Mapping[str, Any],
        function: Callable[..., Any],
        *,
        requires_confirmation: bool = False,
        timeout: float | None = None,
        retries: int = 1,
    ) -> Tool:
        """A tool described by a JSON schema, ``{"name", "description", "parameters"}`` (or
        the same wrapped as ``{"type": "function", "function": {...}}``), calling
        ``function(**arguments)`` once the arguments validate against ``parameters``."""
        spec = dict(schema.get("function", schema)) if isinstance(schema, Mapping) else None
        if spec is None or "name" not in spec:
            raise InvalidInputError("a tool schema needs a name", field="name")
        parameters = dict(spec.get("parameters") or {"type": "object", "properties": {}})
        validate = _validator(parameters)
        is_async = _is_async(function)

        async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
            validate(arguments)
            if is_async:
                return await function(**arguments)
            return await asyncio.to_thread(function, **arguments)

        return cls(
            spec["name"],
            spec.get("description", ""),
            parameters,
            handler,
            requires_confirmation,
            timeout,
            retries,
        )

    @classmethod
    def from_operator(
        cls,
        operator: str,
        *,
        parameters: dict[str, Any] | None = None,
        runtime: Any = None,
        name: str | None = None,
        description: str | None = None,
        requires_confirmation: bool = False,
        timeout: float | None = None,
    ) -> Tool:
        """A tool calling the runtime's ``operator`` with the arguments as its inputs.

        Without ``parameters``, the operator's input schema and description are read from
        ``runtime`` (which must then be given)."""
        if parameters is None or description is None:
            if runtime is None:
                raise InvalidInputError(
                    "give the operator tool its parameters, or the runtime to read them from",
                    field="parameters",
                )
            kernel = getattr(runtime, "kernel", None)  # a remote Runtime lists the server's
            listed = kernel.operators() if kernel is not None else runtime.operators()
            found = next((o for o in listed if o["name"] == operator), None)
            if found is None:
                from ferrule_kernel import UnknownOperatorError

                raise UnknownOperatorError(
                    f"unknown operator {operator!r}; installed: "
                    + ", ".join(o["name"] for o in listed),
                    operator=operator,
                )
            parameters = parameters if parameters is not None else found["input_schema"]
            description = description if description is not None else found["description"]

        async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
            return await context.runtime.acall(operator, arguments)

        return cls(
            name or operator, description, parameters, handler, requires_confirmation, timeout
        )

    @classmethod
    def rest_api(
        cls,
        name: str,
        url: str,
        *,
        method: str = "GET",
        description: str = "",
        parameters: dict[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        bearer_token: str | None = None,
        requires_confirmation: bool = False,
        timeout: float | None = 30.0,
    ) -> Tool:
        """A tool calling a REST endpoint.

        ``url`` may hold ``{placeholders}`` filled (URL-quoted) from the arguments of the
        same name; the other arguments go in the query string (GET, DELETE) or as the JSON
        body (POST, PUT, PATCH). ``bearer_token`` is sent as ``Authorization: Bearer ...``
        and appears in no repr, log or error. The reply's JSON (or text) is the result; a
        status of 400 or more is a `ToolError`.
        """
        method = method.upper()
        placeholders = re.findall(r"{(\w+)}", url)
        if parameters is None:
            parameters = {
                "type": "object",
                "properties": {p: {"type": "string"} for p in placeholders},
                "required": placeholders,
            }
        validate = _validator(parameters)
        send_headers = dict(headers or {})
        secrets = [v for v in send_headers.values() if v]
        if bearer_token is not None:
            send_headers["Authorization"] = f"Bearer {bearer_token}"
            secrets.append(bearer_token)

        async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
            validate(arguments)
            return await _rest_call(method, url, placeholders, arguments, send_headers, secrets)

        return cls(name, description, parameters, handler, requires_confirmation, timeout)


@attrs.define(eq=False)
class FunctionTool(Tool, Generic[P, R]):
    """A `Tool` made from a Python function (`tool`, `Tool.from_function`) that is still
    that function: calling it calls ``function``, and type checkers see its parameters
    and return type (an async function's call returns its coroutine, as the function's)."""

    function: Callable[P, R] = attrs.field(kw_only=True, repr=False)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.function(*args, **kwargs)


class _ToolDecorator(Protocol):
    """What ``tool(...)`` with options returns: a decorator that keeps the function's type."""

    def __call__(self, function: Callable[P, R], /) -> FunctionTool[P, R]: ...


@overload
def tool(function: Callable[P, R], /) -> FunctionTool[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires_confirmation: bool = False,
    timeout: float | None = None,
    retries: int = 1,
) -> _ToolDecorator: ...
def tool(
    function: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_confirmation: bool = False,
    timeout: float | None = None,
    retries: int = 1,
) -> FunctionTool[..., Any] | _ToolDecorator:
    """Make a function a `Tool`: ``@tool`` or ``@tool(requires_confirmation=True)``. The
    result is a `FunctionTool`: still callable as the function, with the same type."""

    def wrap(fn: Callable[P, R]) -> FunctionTool[P, R]:
        return Tool.from_function(
            fn,
            name=name,
            description=description,
            requires_confirmation=requires_confirmation,
            timeout=timeout,
            retries=retries,
        )

    return wrap(function) if function is not None else wrap


# -- presets: operator plugins -----------------------------------------------------------


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


# -- tool sets ---------------------------------------------------------------------------


@runtime_checkable
class Toolset(Protocol):
    """Something that provides several tools, found when a run starts (an MCP server)."""

    async def list_tools(self) -> list[Tool]: ...

    async def aclose(self) -> None: ...


def as_tools(spec: Any) -> Tool | Toolset:
    """A `Tool` or `Toolset` from what users pass as a tool: a `Tool`, a function, a
    preset's name, a `Toolset`, or ``(schema, function)``."""
    if isinstance(spec, Tool) or isinstance(spec, Toolset):
        return spec
    if isinstance(spec, str):
        if spec not in PRESETS:
            raise InvalidInputError(
                f"unknown preset tool {spec!r}; presets: {', '.join(sorted(PRESETS))}",
                field="tools",
            )
        return PRESETS[spec]()
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], Mapping):
        return Tool.from_schema(spec[0], spec[1])
    if callable(spec):
        return Tool.from_function(spec)
    if isinstance(spec, Mapping):
        raise InvalidInputError(
            "a JSON-schema tool needs the function to call: pass Tool.from_schema(schema, function) "
            "or (schema, function)",
            field="tools",
        )
    raise InvalidInputError(f"not a tool: {spec!r}", field="tools")


# -- results ----------------------------------------------------------------------------


def result_text(result: Any) -> str:
    """A handler's result as the text the model reads: strings as they are, anything else
    as JSON. Raises `ToolError` when it cannot be serialised."""
    if isinstance(result, str):
        return result
    if attrs.has(type(result)):
        result = converter.unstructure(result)
    elif hasattr(result, "model_dump"):  # a pydantic model
        result = result.model_dump(mode="json")
    try:
        return json.dumps(result, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ToolError(
            f"the tool returned {type(result).__name__}, which is not JSON-serialisable: {exc}"
        ) from None


# -- function tools -----------------------------------------------------------------------


def _is_async(function: Callable[..., Any]) -> bool:
    target = inspect.unwrap(function)
    # an object whose __call__ is async counts too
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(type(target).__call__)


def _jsonable_default(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _describe_function(function: Callable[..., Any]) -> tuple[str, dict[str, Any], Handler]:
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except Exception as exc:  # e.g. a forward reference that does not resolve
        raise InvalidInputError(
            f"cannot read the type hints of tool {getattr(function, '__name__', function)!r}: {exc}",
            field="tools",
        ) from None
    summary, documented = parse_docstring(inspect.getdoc(function) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    structure: dict[str, Any] = {}  # parameter -> type hint to structure its value into
    context_parameter: str | None = None
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        hint = hints.get(parameter.name, Any)
        if hint is ToolContext or typing.get_origin(hint) is ToolContext:  # ToolContext[Deps]
            context_parameter = parameter.name
            continue
        schema = dict(json_schema(hint))
        if parameter.name in documented:
            schema["description"] = documented[parameter.name]
        if parameter.default is parameter.empty:
            required.append(parameter.name)
        elif _jsonable_default(parameter.default):
            schema["default"] = parameter.default
        properties[parameter.name] = schema
        if hint is not Any:
            structure[parameter.name] = hint
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    validate = _validator(parameters)
    hooks = {}
    for name, hint in structure.items():
        try:
            hooks[name] = converter.get_structure_hook(hint)
        except Exception:  # a hint cattrs cannot build (e.g. int | str): the schema check suffices
            continue
    is_async = _is_async(function)

    async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
        validate(arguments)
        kwargs = {}
        for key, value in arguments.items():
            hook = hooks.get(key)
            if hook is not None:
                kwargs[key] = _structure(hook, value, structure[key], key)
            else:
                kwargs[key] = value
        if context_parameter is not None:
            kwargs[context_parameter] = context
        if is_async:
            return await function(**kwargs)
        return await asyncio.to_thread(function, **kwargs)

    return summary, parameters, handler


def _structure(hook: Callable[[Any, Any], Any], value: Any, hint: Any, name: str) -> Any:
    try:
        return hook(value, hint)
    except Exception as exc:
        errors = field_errors(exc, f"$.{name}")
        summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
        raise ToolError(f"invalid arguments: {summary}", errors=errors) from None


def _validator(schema: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """Check arguments against a JSON schema, raising `ToolError` naming each bad field."""
    checker: Any = None

    def validate(arguments: dict[str, Any]) -> None:
        nonlocal checker
        if checker is None:
            import jsonschema

            cls = jsonschema.validators.validator_for(
                schema, default=jsonschema.Draft202012Validator
            )
            checker = cls(schema)
        errors = [
            {
                "path": "$"
                + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path),
                "message": e.message,
            }
            for e in checker.iter_errors(arguments)
        ]
        if errors:
            summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
            raise ToolError(f"invalid arguments: {summary}", errors=errors)

    return validate


# -- docstrings -----------------------------------------------------------------------------

_GOOGLE_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|Notes?|Attributes)\s*:\s*$"
)
_NUMPY_SECTION = re.compile(
    r"^(Parameters|Returns|Yields|Raises|Examples|Notes|See Also|Attributes)\s*$"
)
_REST_FIELD = re.compile(r"^:(param|parameter|arg|argument|type|returns?|rtype|raises?)\b")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """A docstring's description and its parameters' descriptions.

    Understands Google (``Args:`` then ``name (type): text``), NumPy (``Parameters`` over
    dashes, then ``name : type`` and indented text) and reST (``:param name: text``)
    styles; continuation lines are joined with single spaces.
    """
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    summary: list[str] = []
    params: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        next_line = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if _GOOGLE_SECTION.match(stripped):
            end = _section_end(lines, index + 1)
            if stripped.split(":")[0] in ("Args", "Arguments", "Parameters", "Params"):
                params.update(_google_params(lines[index + 1 : end]))
            index = end
            continue
        if _NUMPY_SECTION.match(stripped) and next_line and set(next_line) == {"-"}:
            end = _numpy_section_end(lines, index + 2)
            if stripped == "Parameters":
                params.update(_numpy_params(lines[index + 2 : end]))
            index = end
            continue
        if _REST_FIELD.match(stripped):
            end = index + 1
            while end < len(lines) and lines[end].startswith((" ", "\t")) and lines[end].strip():
                end += 1
            field = " ".join(part.strip() for part in lines[index:end])
            match = re.match(
                r"^:(?:param|parameter|arg|argument)\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$", field
            )
            if match:
                params[match.group(1)] = match.group(2).strip()
            index = end
            continue
        if not params:  # text after the sections is not the description
            summary.append(stripped)
        index += 1
    description = "\n".join(summary).strip()
    description = re.sub(r"(?<!\n)\n(?!\n)", " ", description)  # unwrap paragraphs
    return description, params


def _section_end(lines: list[str], start: int) -> int:
    end = start
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith((" ", "\t"))):
        end += 1
    return end


def _numpy_section_end(lines: list[str], start: int) -> int:
    end = start
    while end < len(lines):
        following = lines[end + 1].strip() if end + 1 < len(lines) else ""
        if lines[end].strip() and following and set(following) == {"-"}:
            break
        end += 1
    return end


def _google_params(block: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    indent = min((len(line) - len(line.lstrip()) for line in block if line.strip()), default=0)
    current: str | None = None
    for line in block:
        if not line.strip():
            continue
        if len(line) - len(line.lstrip()) == indent:
            match = re.match(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line)
            if match:
                current = match.group(1)
                params[current] = match.group(2).strip()
                continue
        if current is not None:
            params[current] = f"{params[current]} {line.strip()}".strip()
    return params


def _numpy_params(block: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    current: str | None = None
    for line in block:
        if not line.strip():
            continue
        if not line.startswith((" ", "\t")):
            names = line.split(":")[0]
            current = names.split(",")[0].strip()
            params[current] = ""
            for other in names.split(",")[1:]:
                params[other.strip()] = ""
        elif current is not None:
            params[current] = f"{params[current]} {line.strip()}".strip()
    return params


# -- REST calls ----------------------------------------------------------------------------


async def _rest_call(
    method: str,
    url: str,
    placeholders: list[str],
    arguments: dict[str, Any],
    headers: dict[str, str],
    secrets: list[str],
) -> Any:
    from urllib.parse import quote

    import aiohttp
    from ferrule_kit.http import scrub

    rest = dict(arguments)
    target = url
    for name in placeholders:
        target = target.replace("{" + name + "}", quote(str(rest.pop(name, "")), safe=""))
    params = json_body = None
    if method in ("GET", "DELETE", "HEAD") and rest:
        params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in rest.items()}
    elif rest:
        json_body = rest
    try:
        async with aiohttp.ClientSession() as session:
            async with session.request(
                method, target, params=params, json=json_body, headers=headers
            ) as response:
                body = await response.read()
                status = response.status
                content_type = response.headers.get("Content-Type", "")
    except (aiohttp.ClientError, OSError) as exc:
        # aiohttp errors can hold the request (headers included): keep only scrubbed text
        raise ToolError(
            scrub(f"{method} {target} failed: {type(exc).__name__}: {exc}", secrets)
        ) from None
    text = body.decode("utf-8", errors="replace")
    if status >= 400:
        raise ToolError(
            scrub(f"{method} {target} answered HTTP {status}: {text[:500]}", secrets), status=status
        )
    if "json" in content_type:
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text
