"""Structured output: an ``output_schema`` (attrs class, TypedDict, pydantic model or JSON
schema) as the schema the model is asked for and the parser that validates its final reply."""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, json_schema

from .run_errors import OutputValidationError


@attrs.frozen
class StructuredOutput:
    schema: dict[str, Any]
    parse: Callable[[Any], Any]
    #: The ``output_schema`` as given (a class, or the JSON schema): `RunContext`'s.
    source: Any = None


def structured_output(output_schema: Any) -> StructuredOutput | None:
    """An ``output_schema`` (attrs class, TypedDict, pydantic model class or JSON schema)
    as a schema and a parser of the decoded reply that raises `OutputValidationError`."""
    if output_schema is None:
        return None
    if isinstance(output_schema, type) and (
        attrs.has(output_schema) or typing.is_typeddict(output_schema)
    ):
        from ferrule_kit.content.messages import structure_wire

        def parse_attrs(value: Any) -> Any:
            try:
                return structure_wire(value, output_schema, "output")
            except InvalidInputError as exc:
                raise OutputValidationError(
                    f"the reply does not match {output_schema.__name__}: {exc.message}",
                    errors=exc.errors,
                ) from None

        return StructuredOutput(json_schema(output_schema), parse_attrs, output_schema)
    if isinstance(output_schema, type) and hasattr(output_schema, "model_json_schema"):  # pydantic

        def parse_pydantic(value: Any) -> Any:
            try:
                return output_schema.model_validate(value)  # type: ignore[attr-defined]
            except Exception as exc:
                raise OutputValidationError(
                    f"the reply does not match {output_schema.__name__}: {exc}"
                ) from None

        return StructuredOutput(output_schema.model_json_schema(), parse_pydantic, output_schema)
    if isinstance(output_schema, Mapping):
        schema = dict(output_schema)
        checker: Any = None

        def parse_schema(value: Any) -> Any:
            nonlocal checker
            if checker is None:
                import jsonschema

                checker = jsonschema.validators.validator_for(schema)(schema)
            errors = [
                {
                    "path": "$"
                    + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path),
                    "message": e.message,
                }
                for e in checker.iter_errors(value)
            ]
            if errors:
                summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
                raise OutputValidationError(
                    f"the reply does not match the output schema: {summary}", errors=errors
                )
            return value

        return StructuredOutput(schema, parse_schema, output_schema)
    raise InvalidInputError(
        "output_schema must be an attrs class, a TypedDict, a pydantic model or a JSON schema, "
        f"got {output_schema!r}",
        field="output_schema",
    )


def parse_output(output: StructuredOutput, text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise OutputValidationError(f"the reply is not JSON ({exc})", reply=text[:500]) from None
    return output.parse(value)
