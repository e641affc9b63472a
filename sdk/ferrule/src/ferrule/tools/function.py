"""Agno's ``agno.tools.function``: `Function` (a tool: what the model sees and what runs,
with Agno's options), `FunctionCall` (one call of it, as hooks see it), what a call gives
back (`FunctionExecutionResult`, `ToolResult`), and what a paused call asks a person
(`UserInputField`, `UserFeedbackQuestion`).

A `Function` is a ferrule `FunctionTool`: ``Function(name=..., entrypoint=fn)`` describes
``fn`` from its type hints and docstring (or takes ``parameters`` as given with
``skip_entrypoint_processing=True``); its pre- and post-hooks, ``tool_hooks`` and result
cache run around each call (`ferrule.tools.function_run`); ``strict=True`` makes its
schema strict (every property required, no others); ``instructions`` join the agent's
system message (``add_instructions``, on by default).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import shutil
from collections.abc import Callable, Collection
from typing import Any, Generic, Literal, ParamSpec, TypeVar

import attrs
from ferrule_kernel import InvalidInputError

from ..media import Audio, File, Image, Video
from .docstrings import parse_docstring
from .function_run import run_function
from .function_schema import describe_function, schema_validator
from .tool import FunctionTool
from .tool_context import ToolContext

__all__ = [
    "AGNO_INJECTED_PARAMS",
    "CACHE_FORMAT",
    "FRAMEWORK_INJECTED_PARAMS",
    "IDENTITY_INJECTED_PARAMS",
    "MEDIA_INJECTED_PARAMS",
    "RUNTIME_ONLY_FIELDS",
    "SERIALIZED_FIELDS",
    "Function",
    "FunctionCall",
    "FunctionExecutionResult",
    "ToolResult",
    "UserFeedbackOption",
    "UserFeedbackQuestion",
    "UserInputField",
    "get_entrypoint_docstring",
    "isolated_runtime_value",
    "user_input_for",
]

#: The run's objects a tool function may take by name (the model never sees them).
MEDIA_INJECTED_PARAMS = ("images", "videos", "audios", "files")
AGNO_INJECTED_PARAMS = ("agent", "run_context")
FRAMEWORK_INJECTED_PARAMS = ("agent", "team", "run_context", *MEDIA_INJECTED_PARAMS)
IDENTITY_INJECTED_PARAMS = ("agent", "team", "run_context", *AGNO_INJECTED_PARAMS)
#: The version of what a cached result file holds.
CACHE_FORMAT = 2
#: The fields `Function.to_dict` keeps (what describes the tool), and the ones it leaves out.
SERIALIZED_FIELDS = (
    "name",
    "description",
    "parameters",
    "strict",
    "requires_confirmation",
    "external_execution",
)
RUNTIME_ONLY_FIELDS = (
    "instructions",
    "add_instructions",
    "skip_entrypoint_processing",
    "show_result",
    "stop_after_tool_call",
    "pre_hook",
    "post_hook",
    "tool_hooks",
    "requires_user_input",
    "user_input_fields",
    "user_input_schema",
    "external_execution_silent",
    "cache_results",
    "cache_dir",
    "cache_ttl",
)

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}

#: The Python types a model may name for a field it asks the user for (``field_type``).
_FIELD_TYPES: dict[str, type] = {t.__name__: t for t in _PYTHON_TYPES.values()}


@attrs.define
class UserInputField:
    """One argument of a paused tool call (a tool with ``requires_user_input``): the user
    sets ``value`` (the model's own argument is already there for the fields the tool
    does not ask the user for), then `Agent.continue_run` calls the tool with the values.
    ``field_type`` is the argument's Python type, from the tool's JSON schema."""

    name: str
    field_type: type = str
    description: str | None = None
    value: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "field_type": self.field_type.__name__,
            "description": self.description,
            "value": self.value,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UserInputField:
        kind = data.get("field_type", str)
        if isinstance(kind, str):
            names = {t.__name__: t for t in _PYTHON_TYPES.values()}
            kind = names.get(kind, str)
        return cls(data["name"], kind, data.get("description"), data.get("value"))


@attrs.define
class UserFeedbackOption:
    """One option of a `UserFeedbackQuestion`."""

    label: str
    description: str | None = None
    selected: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "description": self.description, "selected": self.selected}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UserFeedbackOption:
        return cls(data["label"], data.get("description"), bool(data.get("selected", False)))


@attrs.define
class UserFeedbackQuestion:
    """A question put to the user with its options (one or several may be chosen)."""

    question: str
    header: str | None = None
    options: list[UserFeedbackOption] | None = None
    multi_select: bool = False
    selected_options: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "question": self.question,
            "header": self.header,
            "multi_select": self.multi_select,
            "selected_options": self.selected_options,
        }
        if self.options is not None:
            out["options"] = [o.to_dict() for o in self.options]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UserFeedbackQuestion:
        options = data.get("options")
        return cls(
            data["question"],
            data.get("header"),
            [UserFeedbackOption.from_dict(o) if isinstance(o, dict) else o for o in options]
            if options is not None
            else None,
            bool(data.get("multi_select", False)),
            data.get("selected_options"),
        )


def user_input_for(tool: Any, arguments: Any) -> list[UserInputField] | None:
    """The fields of a call of ``tool`` with the model's ``arguments`` (None for a tool
    without ``requires_user_input``): every parameter, the ones in
    ``tool.user_input_fields`` (all, when it names none) left for the user; for Agno's
    ``get_user_input`` tool, the fields the model lists in its ``user_input_fields``."""
    if not tool.requires_user_input:
        return None
    asked_fields = arguments.get("user_input_fields") if isinstance(arguments, dict) else None
    if tool.name == "get_user_input" and isinstance(asked_fields, list):
        # UserControlFlowTools: the model lists the fields it needs the user to fill in
        return [
            UserInputField(
                str(f.get("field_name")),
                _FIELD_TYPES.get(str(f.get("field_type")), str),
                f.get("field_description"),
            )
            for f in asked_fields
            if isinstance(f, dict) and f.get("field_name")
        ]
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    asked = set(tool.user_input_fields or properties)
    given = arguments if isinstance(arguments, dict) else {}
    return [
        UserInputField(
            name,
            _PYTHON_TYPES.get(str(schema.get("type")), str),
            schema.get("description"),
            None if name in asked else given.get(name),
        )
        for name, schema in properties.items()
    ]


def get_entrypoint_docstring(entrypoint: Callable[..., Any]) -> str:
    """A function's description as a tool gets it: its docstring's summary and body,
    without the parameter sections."""
    summary, _ = parse_docstring(inspect.getdoc(entrypoint) or "")
    return summary


def isolated_runtime_value(value: Any) -> Any:
    """A copy of a list-valued setting (each attrs element copied), so that two tools
    built from one do not share what a run writes into it."""
    if isinstance(value, list):
        return [copy.copy(v) if attrs.has(type(v)) else v for v in value]
    return value


def _strict_schema(schema: Any) -> Any:
    """A JSON schema in strict form: each object requires all its properties and allows no
    others, all the way down."""
    if isinstance(schema, list):
        return [_strict_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict_schema(v) for k, v in schema.items()}
    if out.get("type") == "object" or "properties" in out:
        out.setdefault("type", "object")
        out["additionalProperties"] = False
        out["required"] = list(out.get("properties", {}))
    return out


def _missing_entrypoint(name: str) -> Any:
    async def handler(arguments: dict[str, Any], context: ToolContext) -> Any:
        raise InvalidInputError(f"tool {name!r} has no entrypoint to run", field="entrypoint")

    return handler


def _no_function(*args: Any, **kwargs: Any) -> Any:
    raise TypeError("this Function has no entrypoint to call")


P = ParamSpec("P")
R = TypeVar("R")


@attrs.define(eq=False, init=False)
class Function(FunctionTool[P, R], Generic[P, R]):
    """A tool with Agno's options (see the module docstring); called directly, it is its
    entrypoint."""

    strict: bool | None = attrs.field(default=None, kw_only=True)
    instructions: str | None = attrs.field(default=None, kw_only=True)
    add_instructions: bool = attrs.field(default=True, kw_only=True)
    entrypoint: Callable[..., Any] | None = attrs.field(default=None, kw_only=True, repr=False)
    skip_entrypoint_processing: bool = attrs.field(default=False, kw_only=True)
    pre_hook: Callable[..., Any] | None = attrs.field(default=None, kw_only=True, repr=False)
    post_hook: Callable[..., Any] | None = attrs.field(default=None, kw_only=True, repr=False)
    tool_hooks: list[Callable[..., Any]] | None = attrs.field(default=None, kw_only=True)
    user_input_schema: list[UserInputField] | None = attrs.field(default=None, kw_only=True)
    external_execution_silent: bool | None = attrs.field(default=None, kw_only=True)
    owning_toolkit: Any = attrs.field(default=None, kw_only=True, repr=False)
    source_toolkit: Any = attrs.field(default=None, kw_only=True, repr=False)
    cache_results: bool = attrs.field(default=False, kw_only=True)
    cache_dir: str | None = attrs.field(default=None, kw_only=True)
    cache_ttl: int = attrs.field(default=3600, kw_only=True)

    def __init__(
        self,
        *,
        name: str,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        strict: bool | None = None,
        instructions: str | None = None,
        add_instructions: bool = True,
        entrypoint: Callable[..., Any] | None = None,
        skip_entrypoint_processing: bool = False,
        show_result: bool = False,
        stop_after_tool_call: bool = False,
        pre_hook: Callable[..., Any] | None = None,
        post_hook: Callable[..., Any] | None = None,
        tool_hooks: list[Callable[..., Any]] | None = None,
        requires_confirmation: bool | None = None,
        requires_user_input: bool | None = None,
        user_input_fields: Collection[str] | None = None,
        user_input_schema: list[UserInputField] | None = None,
        external_execution: bool | None = None,
        external_execution_silent: bool | None = None,
        owning_toolkit: Any = None,
        source_toolkit: Any = None,
        cache_results: bool = False,
        cache_dir: str | None = None,
        cache_ttl: int = 3600,
        timeout: float | None = None,
        retries: int = 1,
        handler: Any = None,
        function: Callable[..., Any] | None = None,
    ) -> None:
        summary = ""
        if handler is None and entrypoint is not None:
            summary, described, handler = describe_function(entrypoint)
            if parameters is None or not skip_entrypoint_processing:
                parameters = described
        elif handler is None:
            handler = _missing_entrypoint(name)
        if parameters is None:
            parameters = {"type": "object", "properties": {}, "required": []}
        if strict:
            parameters = _strict_schema(parameters)
        if tool_hooks is not None and not all(callable(h) for h in tool_hooks):
            raise InvalidInputError("tool_hooks is a list of functions", field="tool_hooks")
        for hook_name, hook in (("pre_hook", pre_hook), ("post_hook", post_hook)):
            if hook is not None and not callable(hook):
                raise InvalidInputError(f"{hook_name} must be a function", field=hook_name)
        if cache_ttl < 0:
            raise InvalidInputError("cache_ttl is seconds, not negative", field="cache_ttl")
        self.__attrs_init__(
            name,
            description if description is not None else summary,
            parameters,
            handler,
            bool(requires_confirmation),
            timeout,
            retries,
            stop_after_tool_call=stop_after_tool_call,
            show_result=show_result,
            external_execution=bool(external_execution),
            requires_user_input=bool(requires_user_input),
            user_input_fields=tuple(user_input_fields or ()),
            function=function or entrypoint or _no_function,
            strict=strict,
            instructions=instructions,
            add_instructions=add_instructions,
            entrypoint=entrypoint,
            skip_entrypoint_processing=skip_entrypoint_processing,
            pre_hook=pre_hook,
            post_hook=post_hook,
            tool_hooks=tool_hooks,
            user_input_schema=user_input_schema,
            external_execution_silent=external_execution_silent,
            owning_toolkit=owning_toolkit,
            source_toolkit=source_toolkit,
            cache_results=cache_results,
            cache_dir=cache_dir,
            cache_ttl=cache_ttl,
        )

    async def invoke(self, arguments: dict[str, Any], context: ToolContext) -> Any:
        if not (self.pre_hook or self.post_hook or self.tool_hooks or self.cache_results):
            return await self.handler(arguments, context)
        return await run_function(self, arguments, context)

    @classmethod
    def from_callable(
        cls, c: Callable[..., Any], name: str | None = None, strict: bool = False
    ) -> Function[..., Any]:
        """The tool of a function (its name, docstring and type hints)."""
        return cls(name=name or str(getattr(c, "__name__", "tool")), entrypoint=c, strict=strict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Function[..., Any]:
        """A tool described by `SERIALIZED_FIELDS` (no entrypoint: it runs elsewhere)."""
        return cls(
            name=str(data["name"]),
            description=data.get("description"),
            parameters=data.get("parameters"),
            strict=data.get("strict"),
            requires_confirmation=data.get("requires_confirmation", False),
            external_execution=data.get("external_execution", False),
        )

    def model_copy(self, *, deep: bool = False) -> Function[P, R]:
        """A copy; with ``deep``, its data copied too (functions and hooks are shared)."""
        changes: dict[str, Any] = {}
        if deep:
            changes = {
                "parameters": copy.deepcopy(self.parameters),
                "user_input_schema": isolated_runtime_value(self.user_input_schema),
                "tool_hooks": list(self.tool_hooks) if self.tool_hooks is not None else None,
            }
        return attrs.evolve(self, **changes)

    def process_entrypoint(self, strict: bool = False) -> None:
        """Describe the tool from its entrypoint again (name kept), strict if asked."""
        if self.entrypoint is None:
            return
        summary, parameters, handler = describe_function(self.entrypoint)
        if not self.skip_entrypoint_processing:
            self.parameters = parameters
            self.handler = handler
        if not self.description:
            self.description = summary
        if strict or self.strict:
            self.process_schema_for_strict()

    def process_schema_for_strict(self) -> None:
        """Make the schema strict: every property required, none other allowed."""
        self.parameters = _strict_schema(self.parameters)


@attrs.define(kw_only=True)
class FunctionExecutionResult:
    """How a call went: ``"success"`` with its result, or ``"failure"`` with its error."""

    status: Literal["success", "failure"]
    result: Any = None
    error: str | None = None
    updated_session_state: dict[str, Any] | None = None
    images: list[Image] | None = None
    videos: list[Video] | None = None
    audios: list[Audio] | None = None
    files: list[File] | None = None


@attrs.define(kw_only=True)
class ToolResult:
    """What a tool may return to give the model text and media together."""

    content: str
    metadata: dict[str, Any] | None = None
    images: list[Image] | None = None
    videos: list[Video] | None = None
    audios: list[Audio] | None = None
    files: list[File] | None = None


@attrs.define(kw_only=True)
class FunctionCall:
    """One call of a `Function`: what its hooks see (``fc.function.name``,
    ``fc.arguments``, ``fc.result``) and what `execute` runs outside any agent."""

    function: Function[..., Any]
    arguments: dict[str, Any] | None = None
    result: Any = None
    call_id: str | None = None
    error: str | None = None

    def get_call_str(self) -> str:
        """``name(arg=value, ...)``, long text arguments shortened to fit the terminal."""
        width = shutil.get_terminal_size((80, 20)).columns
        longest = max(20, (width - len(self.function.name) - 4) // 2)
        if self.arguments is None:
            return f"{self.function.name}()"
        shown = {
            k: "..." if isinstance(v, str) and len(v) > longest else v
            for k, v in self.arguments.items()
        }
        text = f"{self.function.name}({', '.join(f'{k}={v}' for k, v in shown.items())})"
        return text if len(text) <= width else f"{self.function.name}(...)"

    async def aexecute(self) -> FunctionExecutionResult:
        """Run the call (its hooks and cache too) on the process's shared runtime."""
        from ferrule_kit.content.messages import ToolCall

        from ..shared_runtime import default_runtime

        context: ToolContext[Any] = ToolContext(
            default_runtime(),
            ToolCall(
                self.call_id or f"call_{self.function.name}",
                self.function.name,
                self.arguments or {},
            ),
        )
        try:
            validate = schema_validator(self.function.parameters)
            validate(dict(self.arguments or {}))
            self.result = await self.function.invoke(dict(self.arguments or {}), context)
        except Exception as exc:
            self.error = str(exc)
            return FunctionExecutionResult(status="failure", error=self.error)
        return FunctionExecutionResult(status="success", result=self.result)

    def execute(self) -> FunctionExecutionResult:
        """`aexecute`, waited for (on a loop of its own in a worker thread when called
        inside a running event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.aexecute())
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1, "ferrule-function-call") as pool:
            return pool.submit(lambda: asyncio.run(self.aexecute())).result()
