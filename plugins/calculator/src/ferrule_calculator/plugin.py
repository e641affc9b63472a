"""Registers `calculator`, which evaluates an arithmetic expression without `eval`."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, OperatorSpec, hookimpl

MAX_EXPRESSION_LENGTH = 10_000


def _check_length(_instance: Any, _attribute: Any, value: str) -> None:
    if len(value) > MAX_EXPRESSION_LENGTH:
        raise InvalidInputError(
            f"expression is {len(value)} characters long; the limit is {MAX_EXPRESSION_LENGTH}",
            field="$.expression",
        )


@attrs.frozen
class CalculatorInput:
    """An arithmetic expression: numbers, + - * / // % **, parentheses, and the math
    functions and constants the calculator knows (sqrt, sin, log, pi, e, ...)."""

    expression: str = attrs.field(validator=_check_length)


@hookimpl
def ferrule_register_operators() -> list[OperatorSpec]:
    return [
        OperatorSpec(
            "calculator",
            "ferrule_calculator.evaluator:calculator",
            CalculatorInput,
            description=(
                "Evaluate an arithmetic expression, e.g. '2 * (3 + 4) ** 2' or "
                "'sqrt(2) * sin(pi / 4)'. Returns {\"value\": number}."
            ),
        )
    ]
