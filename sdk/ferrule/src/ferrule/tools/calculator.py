"""Agno's ``agno.tools.calculator``: `CalculatorTools`, arithmetic the model can call. Each
tool answers JSON: ``{"operation": ..., "result": ...}``, or ``"error"`` for what has no
answer (division by zero, the factorial of a negative number...)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from .toolkit import Toolkit

__all__ = ["CalculatorTools"]


def _answer(operation: str, **fields: Any) -> str:
    return json.dumps({"operation": operation, **fields})


class CalculatorTools(Toolkit):
    """``CalculatorTools()``; Toolkit's keywords choose among its tools
    (``include_tools=["add"]``)."""

    def __init__(self, **kwargs: Any) -> None:
        tools: list[Callable[..., Any]] = [
            self.add,
            self.subtract,
            self.multiply,
            self.divide,
            self.exponentiate,
            self.factorial,
            self.is_prime,
            self.square_root,
        ]
        super().__init__(name=kwargs.pop("name", "calculator"), tools=tools, **kwargs)

    def add(self, a: float, b: float) -> str:
        """Add two numbers.

        Args:
            a: The first number.
            b: The second number.
        """
        return _answer("addition", result=a + b)

    def subtract(self, a: float, b: float) -> str:
        """Subtract the second number from the first.

        Args:
            a: The number to subtract from.
            b: The number to subtract.
        """
        return _answer("subtraction", result=a - b)

    def multiply(self, a: float, b: float) -> str:
        """Multiply two numbers.

        Args:
            a: The first number.
            b: The second number.
        """
        return _answer("multiplication", result=a * b)

    def divide(self, a: float, b: float) -> str:
        """Divide the first number by the second.

        Args:
            a: The dividend.
            b: The divisor.
        """
        if b == 0:
            return _answer("division", error="Division by zero is undefined")
        return _answer("division", result=a / b)

    def exponentiate(self, a: float, b: float) -> str:
        """Raise the first number to the power of the second.

        Args:
            a: The base.
            b: The exponent.
        """
        try:
            return _answer("exponentiation", result=math.pow(a, b))
        except (OverflowError, ValueError) as exc:
            return _answer("exponentiation", error=str(exc))

    def factorial(self, n: int) -> str:
        """The factorial of a whole number.

        Args:
            n: The number.
        """
        if n < 0:
            return _answer("factorial", error="Factorial of a negative number is undefined")
        return _answer("factorial", result=math.factorial(n))

    def is_prime(self, n: int) -> str:
        """Whether a whole number is prime.

        Args:
            n: The number.
        """
        prime = n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))
        return _answer("prime_check", result=prime)

    def square_root(self, n: float) -> str:
        """The square root of a number.

        Args:
            n: The number.
        """
        if n < 0:
            return _answer("square_root", error="Square root of a negative number is undefined")
        return _answer("square_root", result=math.sqrt(n))
