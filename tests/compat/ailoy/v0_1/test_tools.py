"""Ailoy 0.1 `test_tools.py`: a function's tool schema in Ailoy's dialect, and the
`ToolDescription` it validates as."""

from __future__ import annotations

from typing import Literal

import pytest
from ferrule.agent import ToolDescription
from ferrule.tools import get_json_schema
from ferrule_kernel import InvalidInputError


def test_tool_description() -> None:
    def fn(
        temperature_format: Literal["celsius", "fahrenheit"],
        literal: int | float | bool | str | None = None,
        bool_literal: Literal[0, 1, True, False, "true", "false", "T", "F", "y", "n"] = False,
    ) -> float:
        """
        Test function
        Args:
            temperature_format: The temperature format to use
            literal: Any literal value LLM want to put
            bool_literal: A literal value that can be interpreted as boolean value
        Returns:
            The temperature
        """
        return -40.0

    schema = get_json_schema(fn)
    assert schema["type"] == "function"
    assert schema["function"] == {
        "name": "fn",
        "description": "Test function",
        "parameters": {
            "type": "object",
            "properties": {
                "temperature_format": {
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "description": "The temperature format to use",
                },
                "literal": {
                    "type": ["boolean", "integer", "number", "string"],
                    "nullable": True,
                    "description": "Any literal value LLM want to put",
                },
                "bool_literal": {
                    "type": ["integer", "boolean", "string"],
                    "enum": [0, 1, True, False, "true", "false", "T", "F", "y", "n"],
                    "description": "A literal value that can be interpreted as boolean value",
                },
            },
            "required": ["temperature_format"],
        },
    }
    described = ToolDescription.model_validate(schema["function"])
    assert described.name == "fn" and described.parameters == schema["function"]["parameters"]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"description": "no name", "parameters": {"type": "object", "properties": {}}}, "$.name"),
        ({"name": "f", "parameters": {"type": "array"}}, "$.parameters"),
        ({"name": "f", "description": 3}, "$.description"),
        ({"name": "f", "paramters": {}}, "$.paramters"),
    ],
)
def test_tool_description_refuses_bad_fields_by_name(bad: dict, field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        ToolDescription.model_validate(bad)
    assert caught.value.errors[0]["path"] == field
