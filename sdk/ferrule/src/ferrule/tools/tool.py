"""`Tool`: what the model sees (name, description, parameters) and what runs; its builders
(from a function, a JSON schema, an operator, a REST endpoint) and the `tool` decorator."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Collection, Coroutine, Mapping
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, overload

import attrs
from ferrule_kernel import InvalidInputError, in_range
from ferrule_kit.models.lm import FunctionDescription
from ferrule_kit.network.hostpolicy import checked_arguments, operator_policies

from .function_schema import describe_function, is_async, schema_validator
from .rest import rest_call
from .tool_context import Handler, ToolContext

__all__ = ["FunctionTool", "Tool", "ToolDesc", "tool"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: A function tool's parameters and return type (`FunctionTool`).
P = ParamSpec("P")
R = TypeVar("R")


def _without(schema: dict[str, Any], fields: Collection[str]) -> dict[str, Any]:
    """An object schema less the properties ``fields``."""
    if not fields:
        return schema
    properties = {k: v for k, v in schema.get("properties", {}).items() if k not in fields}
    required = [k for k in schema.get("required", ()) if k not in fields]
    return {**schema, "properties": properties, "required": required}


@attrs.frozen
class ToolDesc(FunctionDescription):
    """Ailoy 0.2's ``ToolDesc(name, description, parameters, *, returns=None)``: what the
    model sees of a tool (a `FunctionDescription`, checked as it is made: a bad field is an
    `InvalidInputError` naming it; a ``description`` of None is empty), and ``returns``,
    the JSON schema of what the tool answers, kept and shown to no model, as in Ailoy.
    ``Tool.new_py_function(func, desc)`` takes one."""

    returns: dict[str, Any] | None = attrs.field(default=None, kw_only=True)

    def __attrs_post_init__(self) -> None:
        if self.description is None:
            object.__setattr__(self, "description", "")
        FunctionDescription.model_validate(
            {"name": self.name, "description": self.description, "parameters": self.parameters}
        )
        if self.returns is not None and not isinstance(self.returns, dict):
            raise InvalidInputError("must be a JSON schema (a dict) or None", field="$.returns")


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
    #: End the run once this tool has run (Agno's ``stop_after_tool_call``): its result is
    #: the run's content, and the model is not asked again.
    stop_after_tool_call: bool = attrs.field(default=False, kw_only=True)
    #: Show the tool's result in the run's content, before the reply (Agno's ``show_result``).
    show_result: bool = attrs.field(default=False, kw_only=True)
    #: The caller runs the tool, not the agent: the run pauses for its result (Agno's
    #: ``external_execution``; `ToolConfirmation.result` then `Agent.continue_run`).
    external_execution: bool = attrs.field(default=False, kw_only=True)
    #: The user gives some arguments: the run pauses with a `UserInputField` per
    #: parameter (Agno's ``requires_user_input``); ``user_input_fields`` names the ones the
    #: user gives (none: all of them), the model's own arguments fill the others.
    requires_user_input: bool = attrs.field(default=False, kw_only=True)
    user_input_fields: tuple[str, ...] = attrs.field(default=(), kw_only=True)

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

    @property
    def desc(self) -> FunctionDescription:
        """What the model sees, as one object (Ailoy's ``tool.desc``)."""
        return FunctionDescription(self.name, self.description, self.parameters)

    async def invoke(self, arguments: dict[str, Any], context: ToolContext) -> Any:
        return await self.handler(arguments, context)

    # -- called directly (Ailoy 0.2's Tool) ----------------------------------------------

    def get_description(self) -> FunctionDescription:
        """What the model sees (Ailoy 0.2's ``tool.get_description()``; `desc`)."""
        return self.desc

    async def call(self, **arguments: Any) -> Any:
        """Run the tool outside any run (Ailoy 0.2's ``await tool.call(**arguments)``): the
        arguments are checked as a model's would be, and a tool that calls operators calls
        them on the process's shared runtime. Its failure is raised."""
        from ferrule_kit.content.messages import ToolCall

        from ..shared_runtime import default_runtime

        context: ToolContext[Any] = ToolContext(
            default_runtime(), ToolCall(f"call_{self.name}", self.name, arguments)
        )
        running = self.handler(arguments, context)
        if self.timeout is None:
            return await running
        return await asyncio.wait_for(running, self.timeout)

    def call_sync(self, **arguments: Any) -> Any:
        """`call`, waited for. Inside a running event loop (as Ailoy allows) the call runs
        on a loop of its own in a worker thread, blocking the caller until it is done."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.call(**arguments))
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1, "ferrule-tool-call") as pool:
            return pool.submit(lambda: asyncio.run(self.call(**arguments))).result()

    def __call__(self, **arguments: Any) -> Coroutine[Any, Any, Any]:
        """``await tool(**arguments)``: `call` (Ailoy 0.2). A `FunctionTool` is called as its
        function instead."""
        return self.call(**arguments)

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
        summary, parameters, handler = describe_function(function)
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
    def new_builtin(cls, kind: str, **config: Any) -> Tool:
        """One of the builtin tools by kind (Ailoy 0.2's): ``terminal``,
        ``web_search_duckduckgo`` (or ``web_search``), ``web_fetch``, ``calculator``, each
        over a tool plugin's operator, ``config`` its settings (`ferrule.tools.builtins`)."""
        from .builtins import builtin_tool

        return builtin_tool(kind, **config)

    @classmethod
    def new_py_function(
        cls,
        func: Callable[..., Any],
        desc: FunctionDescription | Mapping[str, Any] | None = None,
    ) -> Tool:
        """A tool running ``func``, sync or async (Ailoy 0.2's spelling of `from_function`):
        described by its type hints and docstring, or by ``desc`` (``name``,
        ``description``, ``parameters``). Calling the result runs the tool, so it is always
        awaited: ``await tool(location="Seoul")``."""
        if desc is None:
            made = cls.from_function(func)
            return cls(made.name, made.description, made.parameters, made.handler)
        spec = attrs.asdict(desc) if isinstance(desc, FunctionDescription) else desc
        return cls.from_schema(spec, func)

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
        validate = schema_validator(parameters)
        runs_async = is_async(function)

        async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
            validate(arguments)
            if runs_async:
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
        ``runtime`` (which must then be given), less the fields that hold a host policy
        (`ferrule_kit.network.hostpolicy`): the model never sees those, and a call naming one is
        refused."""
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
            if parameters is None:
                parameters = _without(found["input_schema"], operator_policies(kernel, operator))
            description = description if description is not None else found["description"]

        async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
            policies = operator_policies(getattr(context.runtime, "kernel", None), operator)
            inputs = checked_arguments(name or operator, arguments, policies=policies)
            return await context.runtime.acall(operator, inputs)

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
        validate = schema_validator(parameters)
        send_headers = dict(headers or {})
        secrets = [v for v in send_headers.values() if v]
        if bearer_token is not None:
            send_headers["Authorization"] = f"Bearer {bearer_token}"
            secrets.append(bearer_token)

        async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
            validate(arguments)
            return await rest_call(method, url, placeholders, arguments, send_headers, secrets)

        return cls(name, description, parameters, handler, requires_confirmation, timeout)


@attrs.define(eq=False)
class FunctionTool(Tool, Generic[P, R]):
    """A `Tool` made from a Python function (`tool`, `Tool.from_function`) that is still
    that function: calling it calls ``function``, and type checkers see its parameters
    and return type (an async function's call returns its coroutine, as the function's)."""

    function: Callable[P, R] = attrs.field(kw_only=True, repr=False)

    # The function's own call, not `Tool.__call__`: a decorated function stays itself.
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:  # type: ignore[override]
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
    stop_after_tool_call: bool = False,
    show_result: bool | None = None,
    external_execution: bool = False,
    requires_user_input: bool = False,
    user_input_fields: Collection[str] | None = None,
) -> _ToolDecorator: ...
def tool(
    function: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_confirmation: bool = False,
    timeout: float | None = None,
    retries: int = 1,
    stop_after_tool_call: bool = False,
    show_result: bool | None = None,
    external_execution: bool = False,
    requires_user_input: bool = False,
    user_input_fields: Collection[str] | None = None,
) -> FunctionTool[..., Any] | _ToolDecorator:
    """Make a function a `Tool`: ``@tool`` or ``@tool(requires_confirmation=True)``. The
    result is a `FunctionTool`: still callable as the function, with the same type.
    Agno's flags: ``stop_after_tool_call``, ``show_result`` (by default, as
    ``stop_after_tool_call``), ``external_execution``, ``requires_user_input`` with
    ``user_input_fields`` (the parameters the user gives; none named: all)."""
    if show_result is None:
        show_result = stop_after_tool_call
    for flag, value in (
        ("requires_confirmation", requires_confirmation),
        ("stop_after_tool_call", stop_after_tool_call),
        ("show_result", show_result),
        ("external_execution", external_execution),
        ("requires_user_input", requires_user_input),
    ):
        if not isinstance(value, bool):
            raise InvalidInputError(
                f"{flag} must be True or False, got {type(value).__name__}", field=flag
            )

    def wrap(fn: Callable[P, R]) -> FunctionTool[P, R]:
        made = Tool.from_function(
            fn,
            name=name,
            description=description,
            requires_confirmation=requires_confirmation,
            timeout=timeout,
            retries=retries,
        )
        made.stop_after_tool_call = stop_after_tool_call
        made.show_result = show_result
        made.external_execution = external_execution
        made.requires_user_input = requires_user_input
        if user_input_fields is not None:
            if isinstance(user_input_fields, str) or not all(
                isinstance(f, str) for f in user_input_fields
            ):
                raise InvalidInputError(
                    "user_input_fields must be a list of parameter names",
                    field="user_input_fields",
                )
            unknown = sorted(set(user_input_fields) - set(made.parameters.get("properties", {})))
            if unknown:
                raise InvalidInputError(
                    f"user_input_fields names no parameter of {made.name}: {', '.join(unknown)}",
                    field="user_input_fields",
                )
            made.user_input_fields = tuple(user_input_fields)
        return made

    return wrap(function) if function is not None else wrap
