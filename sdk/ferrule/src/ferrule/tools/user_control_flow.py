"""Agno's ``agno.tools.user_control_flow``: `UserControlFlowTools`, a form the model asks the
user to fill in.

The model calls ``get_user_input`` with the fields it needs (``field_name``,
``field_type``, ``field_description`` each); the run pauses (``run.is_paused``) with one
requirement whose ``user_input_schema`` lists those fields. The caller sets their values
(``requirement.provide_user_input({...})`` or each field's ``value``) and continues the
run (`Agent.continue_run`): the model then reads the values as the tool's result, as a
JSON list of ``{"name", "value"}``.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from .tool_context import ToolContext
from .toolkit import Toolkit

__all__ = ["UserControlFlowTools"]

INSTRUCTIONS = (
    "When you need facts only the user has (a date, a name, a choice), call "
    "get_user_input with each field you need: field_name, field_type (a Python type name "
    "such as str, int, float, bool, list or dict) and field_description. Do not ask in "
    "your reply and do not guess: the run waits for the user's answers and gives them to "
    "you as the tool's result. Ask only for what you do not already know, once each; an "
    "empty answer is the user's answer (false, for a yes/no field). Go on with the task as "
    "soon as you have the answers."
)


async def _user_inputs(arguments: dict[str, Any], context: ToolContext) -> str:
    """The result of a ``get_user_input`` call the user answered: each field's value."""
    fields = arguments.get("user_input_fields") or []
    answers = [
        {"name": f["field_name"], "value": arguments.get(f["field_name"])}
        for f in fields
        if isinstance(f, dict) and f.get("field_name")
    ]
    return f"User inputs retrieved: {json.dumps(answers, ensure_ascii=False, default=str)}"


class UserControlFlowTools(Toolkit):
    """``UserControlFlowTools()`` (see the module docstring): ``instructions`` replace the
    default guidance (given unless ``add_instructions=False``)."""

    DEFAULT_INSTRUCTIONS = INSTRUCTIONS

    def __init__(
        self,
        instructions: str | None = None,
        add_instructions: bool = True,
        enable_get_user_input: bool = True,
        all: bool = False,
        **kwargs: Any,
    ) -> None:
        self.instructions = self.DEFAULT_INSTRUCTIONS if instructions is None else instructions
        super().__init__(
            name=kwargs.pop("name", "user_control_flow_tools"),
            tools=[self.get_user_input] if enable_get_user_input or all else [],
            instructions=self.instructions,
            add_instructions=add_instructions,
            **kwargs,
        )
        made = self.functions.get("get_user_input")
        if made is not None:
            self.functions["get_user_input"] = attrs.evolve(
                made, requires_user_input=True, handler=_user_inputs
            )

    def get_user_input(self, user_input_fields: list[dict[str, Any]]) -> str:
        """Ask the user to fill in fields, as in a form; their answers come back as this
        tool's result.

        Args:
            user_input_fields: The fields, each a dict with field_name, field_type (a
                Python type name: str, int, float, bool, list, dict) and
                field_description.
        """
        return "User input received"
