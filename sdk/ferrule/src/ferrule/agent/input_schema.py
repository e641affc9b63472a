"""Agno's ``input_schema``: each run's input validated as the agent's schema (a pydantic
model, a TypedDict or an attrs class) before the run starts, as Agno's runs check it: a
dict (or a `Message` holding one, or a string of JSON) is made the schema's object (a
TypedDict's: the dict, checked), an object of the schema is taken as it is, and anything
else is refused with `InvalidInputError` naming ``input``. The run's user message is then
the object as JSON."""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from typing import Any

from ferrule_kernel import InvalidInputError


def _content(value: Any) -> Any:
    """The input without its message wrapper, a JSON string decoded."""
    if hasattr(value, "role") and hasattr(value, "content"):  # Agno's Message
        value = value.content
    elif hasattr(value, "role") and hasattr(value, "contents"):  # ferrule's
        value = value.text
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise InvalidInputError(
                f"the input must be JSON for this agent's input_schema: {exc}", field="input"
            ) from None
    return value


def validated_input(value: Any, schema: type) -> Any:
    """``value`` validated as ``schema`` (see the module docstring)."""
    if value is None:
        raise InvalidInputError("this agent's input_schema needs an input", field="input")
    name = schema.__name__
    is_class = not typing.is_typeddict(schema)  # a TypedDict refuses isinstance checks
    if is_class and isinstance(value, schema):
        return value
    content = _content(value)
    if is_class and isinstance(content, schema):
        return content
    if not isinstance(content, Mapping):
        raise InvalidInputError(
            f"expected {name} (or a dict of its fields), got {type(content).__name__}",
            field="input",
        )
    try:
        if hasattr(schema, "model_validate"):
            return schema.model_validate(dict(content))  # type: ignore[attr-defined]
        from ferrule_kit.content.messages import structure_wire

        structured = structure_wire(dict(content), schema, "input")
        return dict(structured) if typing.is_typeddict(schema) else structured
    except InvalidInputError:
        raise
    except Exception as exc:  # pydantic's ValidationError
        raise InvalidInputError(f"the input does not match {name}: {exc}", field="input") from None
