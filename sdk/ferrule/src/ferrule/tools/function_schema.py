"""A Python function as a tool: its arguments' JSON schema from its type hints and
docstring (a description ending ``(choices: [...])`` gives the values allowed), and the
handler that validates the model's arguments (jsonschema), structures them into the
hinted types (cattrs) and calls it (a sync function in a worker thread)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
import typing
from collections.abc import Callable
from typing import Any

from ferrule_kernel import InvalidInputError, field_errors, json_schema
from ferrule_kit.content.messages import converter

from .docstrings import parse_docstring
from .errors import ToolError
from .tool_context import Handler, ToolContext

__all__ = ["describe_function", "get_json_schema", "is_async", "schema_validator"]


def is_async(function: Callable[..., Any]) -> bool:
    target = inspect.unwrap(function)
    # an object whose __call__ is async counts too
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(type(target).__call__)


def _jsonable_default(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


#: The parameters a tool function is given by the run, as Agno gives them, and the model
#: never sees: the `RunContext`, the agent, the session's state and the run's dependencies.
INJECTED = ("run_context", "agent", "session_state", "dependencies")


def injected_value(name: str, context: ToolContext) -> Any:
    if name == "run_context":
        return context.run_context
    if name == "agent":
        return context.agent
    if name == "session_state":
        return context.session_state
    return context.deps


#: A parameter's allowed values written at the end of its docstring description, as Hugging
#: Face's chat templates and Ailoy's function tools read them: ``(choices: ["a", "b"])``.
_CHOICES = re.compile(r"\(choices:\s*(\[.*\])\s*\)\s*$", re.IGNORECASE | re.DOTALL)


def _pydantic_adapter(hint: Any) -> Any:
    """A pydantic ``TypeAdapter`` for a type hint naming a pydantic model anywhere in it
    (``SearchParams``, ``list[SearchParams] | None``), else None: such a parameter's
    schema and value are pydantic's (as Agno's tools take them), which neither the
    kernel's schemas nor the converter know."""

    def names_pydantic(tp: Any) -> bool:
        if isinstance(tp, type) and hasattr(tp, "model_validate") and hasattr(tp, "model_fields"):
            return True
        return any(names_pydantic(arg) for arg in typing.get_args(tp))

    if not names_pydantic(hint):
        return None
    from pydantic import TypeAdapter  # installed: the hint names one of its models

    return TypeAdapter(hint)


def _validated(adapter: Any, value: Any, _hint: Any) -> Any:
    """A structure hook over a pydantic ``TypeAdapter``: ``value`` as its type."""
    return adapter.validate_python(value)


def _hoisted(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """A parameter's pydantic schema with its ``$defs`` moved into ``definitions``, the
    tool's (its ``#/$defs/...`` references are read from the tool's schema's root)."""
    definitions.update(schema.pop("$defs", {}))
    return schema


def _describe(schema: dict[str, Any], description: str) -> None:
    """Set a parameter's ``description``; trailing ``(choices: [...])`` (a JSON list)
    becomes its ``enum`` instead, unless its type hint already limits its values."""
    found = _CHOICES.search(description)
    if found is not None and "enum" not in schema:
        try:
            choices = json.loads(found.group(1))
        except ValueError:
            choices = None
        if isinstance(choices, list) and choices:
            schema["enum"] = choices
            description = description[: found.start()].rstrip()
    schema["description"] = description


def describe_function(function: Callable[..., Any]) -> tuple[str, dict[str, Any], Handler]:
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
    injected: list[str] = []  # Agno's parameters the run fills in, by name
    hooks: dict[str, Callable[[Any, Any], Any]] = {}
    definitions: dict[str, Any] = {}  # the pydantic parameters' $defs
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.name in INJECTED:
            injected.append(parameter.name)
            continue
        hint = hints.get(parameter.name, Any)
        if hint is ToolContext or typing.get_origin(hint) is ToolContext:  # ToolContext[Deps]
            context_parameter = parameter.name
            continue
        adapter = _pydantic_adapter(hint)
        if adapter is not None:
            schema = _hoisted(dict(adapter.json_schema()), definitions)
            hooks[parameter.name] = functools.partial(_validated, adapter)
        else:
            schema = dict(json_schema(hint))
        if parameter.name in documented:
            _describe(schema, documented[parameter.name])
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
    if definitions:
        parameters["$defs"] = definitions
    validate = schema_validator(parameters)
    for name, hint in structure.items():
        if name in hooks:
            continue
        try:
            hooks[name] = converter.get_structure_hook(hint)
        except Exception:  # a hint cattrs cannot build (e.g. int | str): the schema check suffices
            continue
    runs_async = is_async(function)

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
        for name in injected:
            kwargs[name] = injected_value(name, context)
        if runs_async:
            return await function(**kwargs)
        return await asyncio.to_thread(function, **kwargs)

    return summary, parameters, handler


def get_json_schema(function: Callable[..., Any]) -> dict[str, Any]:
    """``function`` as a tool, ``{"type": "function", "function": {"name", "description",
    "parameters"}}``, in the schema dialect of Hugging Face's and Ailoy's function tools
    (Ailoy's ``ailoy.tools.get_json_schema``): a union of plain types is a list of type
    names, sorted (``"type": ["integer", "string"]``), with ``"nullable": true`` for an
    ``Optional``; a ``Literal`` names its values' types too, in the order they first
    appear; defaults are not shown. The same schema as the tool the function makes
    (`describe_function`), in that dialect."""
    summary, parameters, _ = describe_function(function)
    properties = {
        name: _plain_types(schema, keep_default=False)
        for name, schema in parameters["properties"].items()
    }
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if "required" in parameters:
        out["required"] = parameters["required"]
    return {
        "type": "function",
        "function": {"name": function.__name__, "description": summary, "parameters": out},
    }


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return "string" if isinstance(value, str) else "object"


def _plain_types(schema: dict[str, Any], keep_default: bool = True) -> dict[str, Any]:
    """A JSON schema with ``anyOf`` of bare types and untyped ``enum`` rewritten as type
    lists (see `get_json_schema`), recursively."""
    out = {k: v for k, v in schema.items() if keep_default or k != "default"}
    alternatives = out.get("anyOf")
    if isinstance(alternatives, list) and all(
        isinstance(a, dict) and set(a) == {"type"} and isinstance(a["type"], str)
        for a in alternatives
    ):
        del out["anyOf"]
        names = sorted({a["type"] for a in alternatives} - {"null"})
        out["type"] = names[0] if len(names) == 1 else names
        if len(names) < len(alternatives):
            out["nullable"] = True
    if "enum" in out and "type" not in out:
        names = list(dict.fromkeys(_json_type(v) for v in out["enum"]))
        typed = {"type": names[0] if len(names) == 1 else names}
        out = {**typed, **out}
    if isinstance(out.get("items"), dict):
        out["items"] = _plain_types(out["items"])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _plain_types(v) for k, v in out["properties"].items()}
    return out


def _structure(hook: Callable[[Any, Any], Any], value: Any, hint: Any, name: str) -> Any:
    try:
        return hook(value, hint)
    except Exception as exc:
        errors = field_errors(exc, f"$.{name}")
        summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
        raise ToolError(f"invalid arguments: {summary}", errors=errors) from None


def schema_validator(schema: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
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
