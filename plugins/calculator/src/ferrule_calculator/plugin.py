"""Registers `calculator`, which evaluates an arithmetic expression without `eval`."""

from __future__ import annotations

import attrs
from ferrule_kernel import OperatorSpec, hookimpl, text_limit

MAX_EXPRESSION_LENGTH = 10_000


@attrs.frozen
class CalculatorInput:
    """An arithmetic expression: numbers, + - * / // % **, parentheses, and the math
    functions and constants the calculator knows (sqrt, sin, log, pi, e, ...)."""

    expression: str = attrs.field(validator=text_limit(MAX_EXPRESSION_LENGTH))


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
