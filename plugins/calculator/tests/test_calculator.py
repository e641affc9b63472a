"""calculator: Python's own arithmetic as the oracle, refusals, junk input."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest
from ferrule import Runtime
from ferrule_calculator.evaluator import MAX_INT_BITS, evaluate
from ferrule_kernel import FerruleError, InvalidInputError
from ferrule_kit.testing.strategies import plugin_profile
from hypothesis import given
from hypothesis import strategies as st

PROFILE = plugin_profile("calculator", ci=300, dev=100)

# What Python's eval may see: the same functions, nothing else.
NAMESPACE: dict[str, Any] = {
    "__builtins__": {},
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "pi": math.pi,
    "e": math.e,
    "tau": math.tau,
    **{
        name: getattr(math, name)
        for name in (
            "sqrt exp log log10 log2 sin cos tan asin acos atan atan2 sinh cosh tanh "
            "hypot degrees radians floor ceil"
        ).split()
    },
}


@attrs.frozen
class Expr:
    """An expression's text (fully parenthesised) and its direct sub-expressions."""

    text: str
    parts: tuple[Expr, ...] = ()


REFUSED = object()


def python_value(expr: Expr) -> Any:
    """Python's value of ``expr``, or REFUSED where the calculator must refuse: Python
    raises, a value is complex, or an integer on the way exceeds the size limit.
    Sub-expressions first, so Python never computes a giant integer."""
    for part in expr.parts:
        if python_value(part) is REFUSED:
            return REFUSED
    try:
        value = eval(expr.text, NAMESPACE)
    except (ZeroDivisionError, OverflowError, ValueError, TypeError):
        return REFUSED
    if isinstance(value, complex) or (isinstance(value, int) and value.bit_length() > MAX_INT_BITS):
        return REFUSED
    return value


NUMBERS = st.one_of(
    st.integers(0, 10**6).map(str),
    st.integers(0, 10**40).map(str),
    st.floats(0, 1e6, allow_nan=False).map(repr),
    st.sampled_from(["0", "1", "2", "0.5", "1e300", "1e-300", "1e308", "pi", "e", "tau"]),
).map(Expr)

ONE_ARGUMENT = st.sampled_from(
    "abs round sqrt exp log log10 log2 sin cos tan asin acos atan sinh cosh tanh "
    "degrees radians floor ceil".split()
)
TWO_ARGUMENTS = st.sampled_from(["min", "max", "atan2", "log", "hypot"])
EXPONENTS = st.one_of(st.integers(-4, 12).map(str), st.sampled_from(["0.5", "1.5", "-0.5", "2.0"]))


def wrap(text: str, *parts: Expr) -> Expr:
    return Expr(text, parts)


def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.one_of(
        st.builds(
            lambda a, op, b: wrap(f"({a.text} {op} {b.text})", a, b),
            children,
            st.sampled_from(["+", "-", "*", "/", "//", "%"]),
            children,
        ),
        # Exponents stay literal and small so Python's own answer stays quick to compute.
        st.builds(lambda a, n: wrap(f"({a.text} ** ({n}))", a), children, EXPONENTS),
        st.builds(lambda sign, a: wrap(f"({sign}{a.text})", a), st.sampled_from("-+"), children),
        st.builds(lambda f, a: wrap(f"{f}({a.text})", a), ONE_ARGUMENT, children),
        st.builds(
            lambda f, a, b: wrap(f"{f}({a.text}, {b.text})", a, b),
            TWO_ARGUMENTS,
            children,
            children,
        ),
        st.builds(lambda a, n: wrap(f"round({a.text}, {n})", a), children, st.integers(-5, 5)),
    )


EXPRESSIONS = st.recursive(NUMBERS, extend, max_leaves=12)


@PROFILE
@given(EXPRESSIONS)
def test_equals_python_where_defined(expr: Expr) -> None:
    expected = python_value(expr)
    if isinstance(expected, float) and not math.isfinite(expected):
        expected = REFUSED
    if expected is REFUSED:
        with pytest.raises(InvalidInputError) as caught:
            evaluate(expr.text)
        assert caught.value.errors[0]["path"] == "$.expression"
    else:
        value = evaluate(expr.text)
        assert type(value) is type(expected)
        assert value == expected


JUNK_TOKENS = st.sampled_from(
    [
        "1",
        "9",
        "0",
        "2.5",
        "1e999",
        "10**",
        "**",
        "*",
        "/",
        "//",
        "%",
        "+",
        "-",
        "~",
        "<<",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ".",
        ":",
        "=",
        "==",
        "'",
        '"',
        "x",
        "pi",
        "sqrt",
        "round",
        "min",
        "__import__",
        "lambda",
        "os",
        "not",
        "if",
        "else",
        "and",
        "j",
        "\\",
        " ",
        "\n",
        "\x00",
        "é",
        "😀",
        "_",
        "9" * 30,
    ]
)
JUNK = st.one_of(st.text(max_size=60), st.lists(JUNK_TOKENS, max_size=25).map("".join))


@PROFILE
@given(JUNK)
def test_junk_never_crashes(expression: str) -> None:
    with Runtime() as rt:
        try:
            result = rt.call("calculator", {"expression": expression})
        except InvalidInputError as exc:
            assert [e["path"] for e in exc.errors] == ["$.expression"]
            assert exc.message
        else:
            value = result["value"]
            assert type(value) in (int, float)
            assert math.isfinite(value)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("2 * (3 + 4) ** 2", 98),
        ("7 // 2 + 7 % 2", 4),
        ("7 / 2", 3.5),
        ("-2 ** 2", -4),
        ("2 ** -1", 0.5),
        ("sqrt(16) + abs(-3)", 7.0),
        ("max(1, 5, 3) - min(4, 2)", 3),
        ("round(2.675, 2)", 2.67),
        ("round(7.5)", 8),
        ("log(e)", 1.0),
        ("log(8, 2)", 3.0),
        ("cos(0) + sin(0) + tan(0) + exp(0)", 2.0),
        ("2 * pi", math.tau),
        ("1_000 * 3", 3000),
        ("  1 +\n 2  ", 3),
        (" + ".join(["1"] * 400), 400),
        ("-" * 300 + "5", 5),
        ("2 ** 9999", 2**9999),
        # Ailoy's calculator names and its ^ for a power (with a power's precedence)
        ("floor(ln(exp(e)) + cos(2 * pi))", 3),
        ("2 + 3 ^ 2", 11),
        ("2 ^ 3 ^ 2", 512),
        ("trunc(-2.7)", -2),
        ("fac(5) + ncr(5, 2) + npr(5, 2)", 150),
    ],
)
def test_examples_through_runtime(expression: str, value: float) -> None:
    with Runtime() as rt:
        result = rt.call("calculator", {"expression": expression})
    assert result == {"value": value}
    assert type(result["value"]) is type(value)


@pytest.mark.parametrize(
    ("expression", "reason", "message"),
    [
        ("1 / 0", "division_by_zero", "division by zero in '1 / 0'"),
        ("5 % (2 - 2)", "division_by_zero", "division by zero"),
        # long parts are shortened in messages
        (
            "(" + " + ".join(["1"] * 100) + ") / 0",
            "division_by_zero",
            "1 + 1 + ...  1 + 1 + 1) / 0'",
        ),
        ("0 ** -1", "division_by_zero", "division by zero"),
        ("9 ** 9 ** 9", "too_large", "too large"),
        ("2 ** 10000", "too_large", "too large"),
        ("2 ** (10 ** 400)", "too_large", "too large"),
        ("(10 ** 3000) * (10 ** 3000)", "too_large", "too large"),
        ("10 ** 4000 / 3", "too_large", "too large"),
        ("2.5 ** 1e10", "too_large", "too large"),
        ("1e308 * 10", "not_finite", "not a finite number"),
        ("sqrt(-1)", "domain", "math domain error"),
        ("(-8) ** (1 / 3)", "domain", "no real value"),
        ("round(5, -100000000)", "domain", "ndigits"),
        ("__import__('os').system('true')", "unknown_name", "unknown function"),
        ("(lambda: 1)()", "unknown_name", "unknown function"),
        ("lambda: 1", "not_allowed", "Lambda is not allowed"),
        ("open('x')", "unknown_name", "unknown function 'open'"),
        ("x + 1", "unknown_name", "unknown name 'x'"),
        ("sqrt", "unknown_name", "a function"),
        ("(1).real", "not_allowed", "Attribute"),
        ("[1, 2]", "not_allowed", "List"),
        ("1 if 2 else 3", "not_allowed", "IfExp"),
        ("1 < 2", "not_allowed", "Compare"),
        ("1 << 2", "not_allowed", "operator <<"),
        ("fac(2.5)", "domain", "takes integers"),
        ("fac(100000)", "too_large", "too large"),
        ("ncr(10 ** 9, 3)", "too_large", "too large"),
        ("~1", "not_allowed", "operator ~"),
        ("not 1", "not_allowed", "operator not"),
        ("'1' + '2'", "not_allowed", "is not a number"),
        ("True + 1", "not_allowed", "is not a number"),
        ("1j", "not_allowed", "is not a number"),
        ("sqrt(x=4)", "not_allowed", "positional"),
        ("max(*[1, 2])", "not_allowed", "positional"),
        ("sqrt(1, 2)", "arguments", "takes 1 argument(s), got 2"),
        ("min(1)", "arguments", "2 or more"),
        ("1 +", "syntax", "not a valid expression"),
        ("", "syntax", "not a valid expression"),
        ("(" * 300 + "1" + ")" * 300, "syntax", "not a valid expression"),
        ("1\x002", "syntax", "not a valid expression"),
        ("**".join(["1"] * 600), "too_deep", "nested too deeply"),
    ],
)
def test_refusals_name_the_expression(expression: str, reason: str, message: str) -> None:
    with Runtime() as rt, pytest.raises(InvalidInputError) as caught:
        rt.call("calculator", {"expression": expression})
    error = caught.value
    assert error.details["reason"] == reason
    assert message in error.message
    assert error.errors == [{"path": "$.expression", "message": error.message}]


def test_input_errors() -> None:
    with Runtime() as rt:
        for inputs, message in (
            ({"expression": "1" * 10_001}, "limit is 10000"),
            ({"expression": 5}, "expected string"),
            ({}, "required field missing"),
        ):
            with pytest.raises(InvalidInputError) as caught:
                rt.call("calculator", inputs)
            assert caught.value.errors[0]["path"] == "$.expression"
            assert message in caught.value.errors[0]["message"]


def test_a_refusal_does_not_affect_the_next_request() -> None:
    with Runtime() as rt:
        with pytest.raises(FerruleError):
            rt.call("calculator", {"expression": "1/0"})
        assert rt.call("calculator", {"expression": "1 + 1"}) == {"value": 2}
