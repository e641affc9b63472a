"""A safe arithmetic evaluator: the expression is parsed with `ast` and only numbers,
arithmetic operators, parentheses and a whitelist of math functions and constants are
evaluated; everything else is refused before anything runs.

Limits keep every request cheap: the expression's length (checked on input), and the
size of every integer, intermediate ones included (at most `MAX_INT_BITS` bits, about
3,000 decimal digits): a power or product that would exceed it is refused before it is
computed. Results must be real and finite.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, Union

from ferrule_kernel import InvalidInputError

if TYPE_CHECKING:
    from .plugin import CalculatorInput

Number = Union[int, float]  # noqa: UP007 (a runtime alias)

MAX_INT_BITS = 10_000
#: round(x, n) with a huge negative n computes 10 ** -n; no useful n is anywhere near this.
MAX_ROUND_DIGITS = 400

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _round(x: Number, ndigits: Number | None = None) -> Number:
    if ndigits is None:
        return round(x)
    if isinstance(ndigits, int) and abs(ndigits) > MAX_ROUND_DIGITS:
        raise ValueError(f"round() ndigits must be within ±{MAX_ROUND_DIGITS}")
    return round(x, ndigits)  # a float ndigits raises TypeError, as in Python


#: name -> (function, fewest arguments, most arguments or None for any number)
#: The largest n of fac / npr / ncr: larger ones take long to compute and exceed the
#: integer limit anyway (1500! has about 4,100 digits).
MAX_COMBINATORIC_N = 1500


def _combinatoric(function: Callable[..., int]) -> Callable[..., int]:
    def checked(*args: Number) -> int:
        if any(not isinstance(a, int) for a in args):
            raise ValueError(f"{function.__name__}() takes integers")
        if args[0] > MAX_COMBINATORIC_N:
            raise OverflowError  # reported as too large to compute
        return function(*args)

    return checked


FUNCTIONS: dict[str, tuple[Callable[..., Number], int, int | None]] = {
    "abs": (abs, 1, 1),
    "round": (_round, 1, 2),
    "min": (min, 2, None),
    "max": (max, 2, None),
    "sqrt": (math.sqrt, 1, 1),
    "exp": (math.exp, 1, 1),
    "log": (math.log, 1, 2),
    "ln": (math.log, 1, 1),
    "log10": (math.log10, 1, 1),
    "log2": (math.log2, 1, 1),
    "sin": (math.sin, 1, 1),
    "cos": (math.cos, 1, 1),
    "tan": (math.tan, 1, 1),
    "asin": (math.asin, 1, 1),
    "acos": (math.acos, 1, 1),
    "atan": (math.atan, 1, 1),
    "atan2": (math.atan2, 2, 2),
    "sinh": (math.sinh, 1, 1),
    "cosh": (math.cosh, 1, 1),
    "tanh": (math.tanh, 1, 1),
    "hypot": (math.hypot, 1, None),
    "degrees": (math.degrees, 1, 1),
    "radians": (math.radians, 1, 1),
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
    "trunc": (math.trunc, 1, 1),
    # the names of Ailoy's calculator: factorial, combinations, permutations
    "fac": (_combinatoric(math.factorial), 1, 1),
    "ncr": (_combinatoric(math.comb), 2, 2),
    "npr": (_combinatoric(math.perm), 2, 2),
}

BINARY: dict[type[ast.operator], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
    ast.Pow: ("**", operator.pow),
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def calculator(inputs: CalculatorInput) -> dict[str, Number]:
    return {"value": evaluate(inputs.expression)}


def evaluate(expression: str) -> Number:
    """The value of ``expression``, or `InvalidInputError` naming ``$.expression``."""
    # Whitespace means nothing in arithmetic; joining lines lets "1 +\n2" parse. ``^`` is
    # a power, as in calculators (and Ailoy's): ``**`` gives it the power's precedence.
    source = " ".join(expression.split()).replace("^", "**")
    _quiet_syntax_warnings()
    try:
        tree = ast.parse(source, filename=_FILENAME, mode="eval")
    except SyntaxError as exc:
        _fail(f"not a valid expression: {exc.msg}", "syntax")
    except (MemoryError, RecursionError):  # e.g. thousands of nested signs
        _fail("not a valid expression: nested too deeply", "syntax")
    evaluator = _Evaluator(source)
    try:
        value = evaluator.eval(tree.body)
    except RecursionError:
        _fail("expression is nested too deeply", "too_deep")
    if isinstance(value, float) and not math.isfinite(value):
        _fail(f"the result is not a finite number ({value})", "not_finite")
    return value


_FILENAME = "<calculator>"


def _quiet_syntax_warnings() -> None:
    # The parser warns about input like "1if" before failing on it; the refusal says
    # enough. A filter for our own filename only (re-added if something reset them).
    for action, _message, category, module, _line in warnings.filters:
        if (
            action == "ignore"
            and category is SyntaxWarning
            and module
            and module.pattern == _MODULE
        ):
            return
    warnings.filterwarnings("ignore", category=SyntaxWarning, module=_MODULE)


_MODULE = re.escape(_FILENAME)


def _fail(message: str, reason: str) -> NoReturn:
    raise InvalidInputError(message, field="$.expression", reason=reason) from None


class _Evaluator:
    def __init__(self, source: str) -> None:
        self.source = source

    def text(self, node: ast.AST) -> str:
        """The part of the expression ``node`` came from, shortened for messages."""
        text = ast.get_source_segment(self.source, node) or ast.unparse(node)
        return text if len(text) <= 80 else f"{text[:60]} ... {text[-15:]}"

    def eval(self, node: ast.expr) -> Number:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Name):
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            hint = " (a function: call it)" if node.id in FUNCTIONS else ""
            _fail(
                f"unknown name {node.id!r}{hint}; constants: {', '.join(CONSTANTS)}", "unknown_name"
            )
        _fail(
            f"{self.text(node)!r} is not arithmetic ({type(node).__name__} is not allowed)",
            "not_allowed",
        )

    def constant(self, node: ast.Constant) -> Number:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail(f"{self.text(node)!r} is not a number", "not_allowed")
        if isinstance(value, int):
            self.check_size(value, node)
        return value

    def unary(self, node: ast.UnaryOp) -> Number:
        # A run of signs (- - -1) is walked in a loop: no recursion per sign.
        signs = []
        operand: ast.expr = node
        while isinstance(operand, ast.UnaryOp):
            if type(operand.op) not in UNARY:
                self.not_allowed(operand.op, operand)
            signs.append(UNARY[type(operand.op)])
            operand = operand.operand
        value = self.eval(operand)
        for sign in reversed(signs):
            value = sign(value)
        return value

    def binary(self, node: ast.BinOp) -> Number:
        # A left-nested chain (1 + 2 - 3 * 4 ...) is walked in a loop, so long sums do not
        # recurse once per term.
        chain = []
        left: ast.expr = node
        while isinstance(left, ast.BinOp):
            chain.append(left)
            left = left.left
        value = self.eval(left)
        for step in reversed(chain):
            if type(step.op) not in BINARY:
                self.not_allowed(step.op, step)
            value = self.apply(step, value, self.eval(step.right))
        return value

    def apply(self, node: ast.BinOp, left: Number, right: Number) -> Number:
        symbol, function = BINARY[type(node.op)]
        if isinstance(left, int) and isinstance(right, int):
            # Refuse what cannot fit before computing it; near the limit, compute and check.
            if symbol == "*" and left.bit_length() + right.bit_length() > MAX_INT_BITS + 1:
                self.too_large(node)
            if symbol == "**" and right > 0 and abs(left) > 1:
                # |left| ** right has at least `right` bits
                if right > MAX_INT_BITS or right * math.log2(abs(left)) > MAX_INT_BITS + 1:
                    self.too_large(node)
        try:
            value = function(left, right)
        except ZeroDivisionError:
            _fail(f"division by zero in {self.text(node)!r}", "division_by_zero")
        except OverflowError:
            _fail(f"{self.text(node)!r} is too large to compute", "too_large")
        return self.checked(value, node)

    def call(self, node: ast.Call) -> Number:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in FUNCTIONS:
            what = repr(name) if name else repr(self.text(node.func))
            _fail(f"unknown function {what}; known: {', '.join(FUNCTIONS)}", "unknown_name")
        function, fewest, most = FUNCTIONS[name]
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            _fail(f"{name}() takes plain positional arguments only", "not_allowed")
        count = len(node.args)
        if count < fewest or (most is not None and count > most):
            expected = (
                str(fewest)
                if fewest == most
                else f"{fewest} or more"
                if most is None
                else f"{fewest} to {most}"
            )
            _fail(f"{name}() takes {expected} argument(s), got {count}", "arguments")
        args = [self.eval(arg) for arg in node.args]
        try:
            value = function(*args)
        except ZeroDivisionError:
            _fail(f"division by zero in {self.text(node)!r}", "division_by_zero")
        except OverflowError:
            _fail(f"{self.text(node)!r} is too large to compute", "too_large")
        except (ValueError, TypeError) as exc:  # math domain errors, round(x, 1.5)
            _fail(f"{self.text(node)!r}: {exc}", "domain")
        return self.checked(value, node)

    def checked(self, value: Any, node: ast.expr) -> Number:
        if isinstance(value, complex):  # e.g. (-8) ** (1/3)
            _fail(f"{self.text(node)!r} has no real value", "domain")
        if isinstance(value, int):
            self.check_size(value, node)
        return value

    def check_size(self, value: int, node: ast.expr) -> None:
        if value.bit_length() > MAX_INT_BITS:
            self.too_large(node)

    def not_allowed(self, op: ast.AST, node: ast.expr) -> NoReturn:
        _fail(f"operator {_op_text(op)} is not allowed (in {self.text(node)!r})", "not_allowed")

    def too_large(self, node: ast.expr) -> NoReturn:
        _fail(
            f"{self.text(node)!r} is too large: integers are limited to {MAX_INT_BITS} bits "
            f"(about {int(MAX_INT_BITS * math.log10(2))} digits)",
            "too_large",
        )


def _op_text(op: ast.AST) -> str:
    return {
        ast.LShift: "<<",
        ast.RShift: ">>",
        ast.BitOr: "|",
        ast.BitAnd: "&",
        ast.BitXor: "^",
        ast.MatMult: "@",
        ast.Invert: "~",
        ast.Not: "not",
    }.get(type(op), type(op).__name__)
