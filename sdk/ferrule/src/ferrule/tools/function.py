"""Agno's ``agno.tools.function``: a tool's description with what runs (``Function``, ferrule's
`Tool`), one call of it by the model (``FunctionCall``, the kit's `ToolCall`: its
``function.name`` and ``arguments``) and `UserInputField`, one argument of a
``requires_user_input`` tool's call that the user gives."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kit.messages import ToolCall as FunctionCall

from .tool import Tool as Function

__all__ = ["Function", "FunctionCall", "UserInputField", "user_input_for"]

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


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


def user_input_for(tool: Function, arguments: Any) -> list[UserInputField] | None:
    """The fields of a call of ``tool`` with the model's ``arguments`` (None for a tool
    without ``requires_user_input``): every parameter, the ones in
    ``tool.user_input_fields`` (all, when it names none) left for the user."""
    if not tool.requires_user_input:
        return None
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
